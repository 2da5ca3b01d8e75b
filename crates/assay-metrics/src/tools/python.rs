//! Python's view of JSON values, as `json.loads` gives them: `==` (with
//! `1 == 1.0 == True`) and `str()`, which the reference tool-call metrics
//! compare arguments by.

use serde_json::{Map, Value};

/// A JSON number or boolean as Python compares it.
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::Int(i128::from(*b))),
        Value::Number(n) => Some(match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Num::Int(i128::from(i)),
            (None, Some(u)) => Num::Int(i128::from(u)),
            _ => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
        }),
        _ => None,
    }
}

fn num_eq(a: Num, b: Num) -> bool {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => a == b,
        (Num::Float(a), Num::Float(b)) => a == b,
        // Python compares an int and a float exactly.
        (Num::Int(i), Num::Float(f)) | (Num::Float(f), Num::Int(i)) => {
            f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 && f as i128 == i
        }
    }
}

/// Python's `a == b` on the values `json.loads` makes of `a` and `b`:
/// `True == 1 == 1.0`, lists element by element, dicts whatever their
/// key order.
///
/// ```
/// use assay_metrics::tools::python::py_eq;
/// use serde_json::json;
/// assert!(py_eq(&json!(1), &json!(1.0)) && py_eq(&json!([true]), &json!([1])));
/// assert!(!py_eq(&json!("1"), &json!(1)) && !py_eq(&json!(null), &json!(0)));
/// ```
pub fn py_eq(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return num_eq(x, y);
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| py_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => map_eq(x, y),
        _ => false,
    }
}

/// Python's `==` between two dicts.
pub fn map_eq(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| py_eq(v, w)))
}

/// Python's `str()` of the value: a string is itself, anything else its
/// `repr`.
///
/// Objects are written in their keys' input order, as a Python dict from
/// `json.loads` is (serde_json keeps it: its `preserve_order` feature).
/// Non-ASCII characters are written as they are, but for the invisible
/// ones (controls, format characters, spaces other than ' ', private use)
/// that Python escapes; code points unassigned in Python's Unicode tables
/// count as printable.
///
/// ```
/// use assay_metrics::tools::python::py_str;
/// use serde_json::json;
/// assert_eq!(py_str(&json!("it's")), "it's");
/// assert_eq!(py_str(&json!({"b": [1, 1e-5, 1e16, "it's", null, true], "a": false})),
///            r#"{'b': [1, 1e-05, 1e+16, "it's", None, True], 'a': False}"#);
/// ```
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => {
            let mut out = String::new();
            repr(other, &mut out);
            out
        }
    }
}

fn repr(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => match num(v) {
            Some(Num::Int(i)) => out.push_str(&i.to_string()),
            _ => out.push_str(&float_repr(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => str_repr(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                str_repr(k, out);
                out.push_str(": ");
                repr(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, fixed
/// notation for decimal exponents from -4 to 15, else `1e-05` / `1e+16`.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if x < 0.0 { "-" } else { "" };
    let point = exp + 1;
    let n = digits.len() as i32;
    if -4 < point && point <= 16 {
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else if point >= n {
            format!("{sign}{digits}{}.0", "0".repeat((point - n) as usize))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{sign}{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{rest}e{esign}{:02}", exp.abs())
    }
}

/// Python's `repr(str)`.
fn str_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_ascii() || printable(c) => out.push(c),
            c => {
                let u = c as u32;
                out.push_str(&if u <= 0xff {
                    format!("\\x{u:02x}")
                } else if u <= 0xffff {
                    format!("\\u{u:04x}")
                } else {
                    format!("\\U{u:08x}")
                });
            }
        }
    }
    out.push(quote);
}

/// Python's `str.isprintable` for a non-ASCII character, from the ranges
/// of the categories it escapes (Cc, Cf, Zs but ' ', Zl, Zp, Co).
fn printable(c: char) -> bool {
    !matches!(c as u32,
        0x80..=0xa0 | 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891 | 0x8e2
        | 0x1680 | 0x180e | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x2064
        | 0x2066..=0x206f | 0x3000 | 0xe000..=0xf8ff | 0xfeff | 0xfff9..=0xfffb
        | 0x110bd | 0x110cd | 0x13430..=0x1343f | 0x1bca0..=0x1bca3 | 0x1d173..=0x1d17a
        | 0xe0001 | 0xe0020..=0xe007f | 0xf0000..=0x10ffff)
}

/// Python's `round(x, 4)`: the nearest double to `x` rounded to 4
/// decimals, ties to even on `x`'s exact value.
pub fn round4(x: f64) -> f64 {
    format!("{x:.4}").parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_repr_matches_python() {
        for (x, want) in [
            (1.0, "1.0"),
            (2.5, "2.5"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (9999999999999998.0, "9999999999999998.0"),
            (123456789012345.6, "123456789012345.6"),
            (1.5e300, "1.5e+300"),
            (-0.0, "-0.0"),
            (-2.5e-7, "-2.5e-07"),
            (100.0, "100.0"),
        ] {
            assert_eq!(float_repr(x), want, "{x}");
        }
    }

    #[test]
    fn string_repr_matches_python() {
        for (s, want) in [
            ("it's", r#""it's""#),
            (r#"say "hi""#, r#"'say "hi"'"#),
            (r#"both ' and ""#, r#"'both \' and "'"#),
            ("a\\b\n\t", r"'a\\b\n\t'"),
            ("nbsp\u{a0}x zw\u{200b}", r"'nbsp\xa0x zw\u200b'"),
            ("ünïcødé 日本語 🎉", "'ünïcødé 日本語 🎉'"),
        ] {
            assert_eq!(py_str(&json!([s]))[1..].trim_end_matches(']'), want, "{s}");
        }
    }

    #[test]
    fn round4_is_half_even_on_the_exact_value() {
        assert_eq!(round4(0.03125), 0.0312);
        assert_eq!(round4(2.0 / 3.0), 0.6667);
        assert_eq!(round4(0.5), 0.5);
    }

    #[test]
    fn numbers_compare_as_in_python() {
        assert!(py_eq(&json!(true), &json!(1.0)));
        assert!(!py_eq(
            &json!(9007199254740993u64),
            &json!(9007199254740992.0)
        ));
        assert!(py_eq(
            &json!({"a": [1, {"b": false}]}),
            &json!({"a": [1.0, {"b": 0}]})
        ));
    }
}
