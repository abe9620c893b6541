//! The edges of the control-flow graph grouped by point, in one allocation: a vector per
//! point would cost an allocation each, and a large workflow has hundreds of thousands of
//! points.

use std::ops::Index;

/// For each point, the indices of some of its edges (its incoming or its outgoing ones),
/// in edge order.
#[derive(Clone, Debug, Default)]
pub(crate) struct EdgesByPoint {
    /// `starts[p]..starts[p + 1]` is point `p`'s range in `edges`.
    starts: Vec<usize>,
    edges: Vec<usize>,
}

impl EdgesByPoint {
    /// Groups edge indices `0..ends.len()` by `ends[index]`, the point each edge belongs
    /// to (its target for incoming edges, its source for outgoing ones).
    pub(crate) fn group(points: usize, ends: impl Iterator<Item = usize> + Clone) -> Self {
        let mut starts = vec![0; points + 1];
        for point in ends.clone() {
            starts[point + 1] += 1;
        }
        for point in 0..points {
            starts[point + 1] += starts[point];
        }
        let mut next = starts.clone();
        let mut edges = vec![0; starts[points]];
        for (index, point) in ends.enumerate() {
            edges[next[point]] = index;
            next[point] += 1;
        }
        Self { starts, edges }
    }
}

impl Index<usize> for EdgesByPoint {
    type Output = [usize];

    fn index(&self, point: usize) -> &[usize] {
        &self.edges[self.starts[point]..self.starts[point + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::EdgesByPoint;

    #[test]
    fn groups_edges_by_point_in_edge_order() {
        // Edges 0..4 ending at points 2, 0, 2, 1; point 3 has none.
        let grouped = EdgesByPoint::group(4, [2, 0, 2, 1].into_iter());
        assert_eq!(&grouped[0], &[1]);
        assert_eq!(&grouped[1], &[3]);
        assert_eq!(&grouped[2], &[0, 2]);
        assert!(grouped[3].is_empty());
    }
}
