//! Number literals: decimal integers and floats (with `.`, exponents and `_` separators),
//! `0x` hex, `0o` octal and `0b` binary, each with an optional sign.
//!
//! The parser hands over the whole word (the run of identifier characters starting with a
//! digit, a sign and a digit, or a `.` and a digit), so `1.0.0` or `0x10g` is one invalid
//! number rather than a number followed by junk. Integers are kept as `i128`; larger ones
//! are reported. Floats go through the standard library's correctly rounded parser, so
//! `1e1000` becomes infinity like in the reference implementation.

use super::tree::Value;

/// Why a number literal is invalid: a message fragment (after "invalid number `…`: ") and
/// a help text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NumberError {
    pub(super) reason: String,
    pub(super) help: String,
}

const SHAPES: &str = "numbers look like `42`, `-1.5`, `1_000`, `2.5e-3`, `0xff`, `0o17` or `0b1010`; \
     to write a string, quote it";

fn error(reason: impl Into<String>) -> NumberError {
    NumberError {
        reason: reason.into(),
        help: String::from(SHAPES),
    }
}

/// Parses a number word.
pub(super) fn parse_number(word: &str) -> Result<Value, NumberError> {
    let bytes = word.as_bytes();
    let signed = matches!(bytes.first(), Some(b'+' | b'-'));
    let negative = bytes.first() == Some(&b'-');
    let digits = if signed { 1 } else { 0 };
    match bytes.get(digits..digits + 2) {
        Some(b"0x") => radix(word, digits + 2, 16, "hexadecimal", negative),
        Some(b"0o") => radix(word, digits + 2, 8, "octal", negative),
        Some(b"0b") => radix(word, digits + 2, 2, "binary", negative),
        _ => decimal(word, digits, negative),
    }
}

fn radix(
    word: &str,
    start: usize,
    radix: u32,
    name: &str,
    negative: bool,
) -> Result<Value, NumberError> {
    let prefix = &word[start - 2..start];
    let rest = &word[start..];
    match rest.chars().next() {
        None => return Err(error(format!("expected {name} digits after `{prefix}`"))),
        Some('_') => {
            return Err(error(format!(
                "`_` cannot come right after `{prefix}`; start with a digit"
            )));
        }
        _ => {}
    }
    let mut value: u128 = 0;
    let mut overflow = false;
    for ch in rest.chars() {
        if ch == '_' {
            continue;
        }
        let Some(digit) = ch.to_digit(radix) else {
            let article = if name.starts_with('o') { "an" } else { "a" };
            return Err(error(format!("`{ch}` is not {article} {name} digit")));
        };
        match value
            .checked_mul(u128::from(radix))
            .and_then(|v| v.checked_add(u128::from(digit)))
        {
            Some(next) => value = next,
            None => overflow = true,
        }
    }
    signed_integer(value, negative, overflow)
}

fn signed_integer(magnitude: u128, negative: bool, overflow: bool) -> Result<Value, NumberError> {
    let value = if overflow {
        None
    } else if negative {
        0i128.checked_sub_unsigned(magnitude)
    } else {
        i128::try_from(magnitude).ok()
    };
    value.map(Value::Integer).ok_or_else(|| NumberError {
        reason: String::from("it does not fit in a 128-bit integer"),
        help: String::from(
            "integers must lie between -2^127 and 2^127-1; write a float (`1e40`) or a quoted \
             string instead",
        ),
    })
}

/// Skips `digit (digit | '_')*` from `pos`; returns the end, or `None` if no digit is there.
fn integer_part(bytes: &[u8], pos: usize) -> Option<usize> {
    if !bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let mut end = pos + 1;
    while bytes
        .get(end)
        .is_some_and(|&b| b.is_ascii_digit() || b == b'_')
    {
        end += 1;
    }
    Some(end)
}

fn decimal(word: &str, start: usize, negative: bool) -> Result<Value, NumberError> {
    let bytes = word.as_bytes();
    let Some(mut pos) = integer_part(bytes, start) else {
        return Err(if bytes.get(start) == Some(&b'.') {
            NumberError {
                reason: String::from("a number needs a digit before the `.`"),
                help: format!("write `{}0{}`", &word[..start], &word[start..]),
            }
        } else {
            error("expected a digit")
        });
    };
    let integer_end = pos;
    let mut is_float = false;
    if bytes.get(pos) == Some(&b'.') {
        is_float = true;
        pos =
            integer_part(bytes, pos + 1).ok_or_else(|| error("expected a digit after the `.`"))?;
    }
    if matches!(bytes.get(pos), Some(b'e' | b'E')) {
        is_float = true;
        let mut exponent = pos + 1;
        if matches!(bytes.get(exponent), Some(b'+' | b'-')) {
            exponent += 1;
        }
        pos = integer_part(bytes, exponent)
            .ok_or_else(|| error("expected a digit in the exponent"))?;
    }
    if let Some(&byte) = bytes.get(pos) {
        return Err(match byte {
            b'.' => error("a number has at most one `.`"),
            b'e' | b'E' => error("a number has at most one exponent"),
            _ => {
                let ch = word[pos..].chars().next().unwrap_or('?');
                error(format!("unexpected `{ch}`"))
            }
        });
    }
    if !is_float {
        let mut value: u128 = 0;
        let mut overflow = false;
        for &byte in &bytes[start..integer_end] {
            if byte == b'_' {
                continue;
            }
            match value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u128::from(byte - b'0')))
            {
                Some(next) => value = next,
                None => overflow = true,
            }
        }
        return signed_integer(value, negative, overflow);
    }
    let parsed = if word.contains('_') {
        word.replace('_', "").parse::<f64>()
    } else {
        word.parse::<f64>()
    };
    parsed
        .map(Value::Float)
        .map_err(|_| error("it is not a valid float"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(word: &str) -> Value {
        parse_number(word).unwrap_or_else(|e| panic!("{word}: {e:?}"))
    }

    fn err(word: &str) -> String {
        parse_number(word).expect_err(word).reason
    }

    #[test]
    fn integers_in_every_base() {
        assert_eq!(ok("0"), Value::Integer(0));
        assert_eq!(ok("-10"), Value::Integer(-10));
        assert_eq!(ok("+1_000__"), Value::Integer(1000));
        assert_eq!(
            ok("0xabcdef1234567890"),
            Value::Integer(0xabcd_ef12_3456_7890)
        );
        assert_eq!(ok("-0xFF_"), Value::Integer(-255));
        assert_eq!(ok("0o777"), Value::Integer(0o777));
        assert_eq!(ok("0b1010_1"), Value::Integer(0b10101));
        assert_eq!(ok("0011"), Value::Integer(11));
        assert_eq!(
            ok("-170141183460469231731687303715884105728"),
            Value::Integer(i128::MIN)
        );
        assert_eq!(
            ok("170141183460469231731687303715884105727"),
            Value::Integer(i128::MAX)
        );
    }

    #[test]
    fn floats() {
        assert_eq!(ok("1.5"), Value::Float(1.5));
        assert_eq!(ok("-1.0"), Value::Float(-1.0));
        assert_eq!(ok("1e10"), Value::Float(1e10));
        assert_eq!(ok("1.5E+3"), Value::Float(1500.0));
        assert_eq!(ok("1_0.0_2e-1_0"), Value::Float(10.02e-10));
        assert_eq!(ok("1_e5"), Value::Float(1e5));
        assert_eq!(ok("1.23E+1000"), Value::Float(f64::INFINITY));
        assert_eq!(ok("1.23E-1000"), Value::Float(0.0));
        assert_eq!(
            ok("1000000000000000000000000000000000000000.0"),
            Value::Float(1e39)
        );
    }

    #[test]
    fn invalid_numbers() {
        assert_eq!(err("1."), "expected a digit after the `.`");
        assert_eq!(err("1.e7"), "expected a digit after the `.`");
        assert_eq!(err("1._7"), "expected a digit after the `.`");
        assert_eq!(err("1.0.0"), "a number has at most one `.`");
        assert_eq!(err("1.0E10e10"), "a number has at most one exponent");
        assert_eq!(err("1e_5"), "expected a digit in the exponent");
        assert_eq!(err("0n"), "unexpected `n`");
        assert_eq!(err(".1"), "a number needs a digit before the `.`");
        assert_eq!(parse_number("-.1").expect_err("-.1").help, "write `-0.1`");
        assert_eq!(err("0x"), "expected hexadecimal digits after `0x`");
        assert_eq!(
            err("0x_10"),
            "`_` cannot come right after `0x`; start with a digit"
        );
        assert_eq!(err("0xx10"), "`x` is not a hexadecimal digit");
        assert_eq!(err("0o8"), "`8` is not an octal digit");
        assert_eq!(err("0b2"), "`2` is not a binary digit");
        assert_eq!(
            err("0x1_0000_0000_0000_0000_0000_0000_0000_0000"),
            "it does not fit in a 128-bit integer"
        );
        assert_eq!(
            err("170141183460469231731687303715884105728"),
            "it does not fit in a 128-bit integer"
        );
    }
}
