"""LangGraph's SQLite checkpointer on atomic's W3 loop, for a side-by-side figure.

Two nodes per iteration (increment, check), as atomic's W3 (`set` then the loop check), each a
LangGraph super-step and so one checkpoint written by `SqliteSaver` to a file. Prints the
wall time per committed step. Run (BENCHMARKS.md, "Durable steps"):

    python3 -m venv /tmp/lg && /tmp/lg/bin/pip install langgraph==1.2.24 langgraph-checkpoint-sqlite==3.1.2
    /tmp/lg/bin/python benches/compare/langgraph_loop.py 5000            # SqliteSaver
    /tmp/lg/bin/python benches/compare/langgraph_loop.py 5000 --memory   # no checkpointer

`benches/compare/w3_side_by_side.sh` runs it beside `atomic run` of the same loop.
"""

import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    n: int


def build(iterations: int):
    graph = StateGraph(State)
    graph.add_node("increment", lambda state: {"n": state["n"] + 1})
    graph.add_node("check", lambda state: {})
    graph.add_edge(START, "increment")
    graph.add_edge("increment", "check")
    graph.add_conditional_edges(
        "check", lambda state: END if state["n"] >= iterations else "increment"
    )
    return graph


def main() -> None:
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    memory = "--memory" in sys.argv[1:]
    iterations = int(args[0]) if args else 5000
    with tempfile.TemporaryDirectory() as directory:
        if memory:
            saver = None
        else:
            conn = sqlite3.connect(Path(directory) / "lg.db", check_same_thread=False)
            saver = SqliteSaver(conn)
        app = build(iterations).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "w3"}, "recursion_limit": iterations * 2 + 10}
        started = time.perf_counter()
        final = app.invoke({"n": 0}, config)
        elapsed = time.perf_counter() - started
        assert final["n"] == iterations, final
        steps = iterations * 2
        label = "no checkpointer" if memory else "SqliteSaver"
        print(
            f"LangGraph {label}: {iterations} iterations, {steps} steps in {elapsed * 1000:.1f} ms: "
            f"{elapsed / steps * 1e6:.1f} µs per step"
        )


if __name__ == "__main__":
    main()
