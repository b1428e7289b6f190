//! `quantity`: arbitrary bytes as a Kubernetes quantity string.
//!
//! Checks: `to_milli` and `to_units` never panic; they agree on validity; when both succeed,
//! `units == ceil_away(milli / 1000)`; and for the simple forms (`[+-]digits[.digits]` with at
//! most 15 digits, then an SI/binary suffix or an exponent within ±20) the result equals a
//! reference computed here with exact `i128` fractions, including which values overflow.

#![no_main]

use basalt_runtime::convert::quantity::{to_milli, to_units, QuantityError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(q) = std::str::from_utf8(data) else { return };
    let milli = to_milli(q);
    let units = to_units(q);
    let invalid = |r: &Result<i64, QuantityError>| matches!(r, Err(QuantityError::Invalid(_)));
    assert_eq!(invalid(&milli), invalid(&units), "validity differs for {q:?}: {milli:?} vs {units:?}");
    if let (Ok(m), Ok(u)) = (&milli, &units) {
        assert_eq!(*u as i128, div_away(*m as i128, 1000), "{q:?}: units {u} vs milli {m}");
    }
    if let Some((num, den)) = reference(q) {
        assert_eq!(milli, expect(q, num * 1000, den), "to_milli({q:?})");
        assert_eq!(units, expect(q, num, den), "to_units({q:?})");
    }
});

/// `num / den` (den > 0) rounded away from zero.
fn div_away(num: i128, den: i128) -> i128 {
    let q = num / den;
    if num % den == 0 {
        q
    } else if num < 0 {
        q - 1
    } else {
        q + 1
    }
}

/// The expected result for the exact value `num / den`.
fn expect(q: &str, num: i128, den: i128) -> Result<i64, QuantityError> {
    i64::try_from(div_away(num, den)).map_err(|_| QuantityError::Overflow(q.to_string()))
}

/// The exact value of a simple-form quantity as `(numerator, denominator)`, or `None` when `q`
/// is not in the simple form this reference covers.
fn reference(q: &str) -> Option<(i128, i128)> {
    let (negative, body) = match q.as_bytes().first()? {
        b'-' => (true, &q[1..]),
        b'+' => (false, &q[1..]),
        _ => (false, q),
    };
    let split = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
    let (number, suffix) = body.split_at(split);
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) if !f.contains('.') => (i, f),
        Some(_) => return None,
        None => (number, ""),
    };
    if int.len() + frac.len() == 0 || int.len() + frac.len() > 15 {
        return None;
    }
    let digits: i128 = format!("{int}{frac}").parse().ok()?;
    let mut num = if negative { -digits } else { digits };
    let mut den = 10i128.pow(frac.len() as u32);
    let pow10 = |e: u32| 10i128.pow(e);
    match suffix {
        "" => {}
        "m" => den *= 1000,
        "k" => num *= pow10(3),
        "M" => num *= pow10(6),
        "G" => num *= pow10(9),
        "T" => num *= pow10(12),
        "P" => num *= pow10(15),
        "E" => num *= pow10(18),
        "Ki" => num <<= 10,
        "Mi" => num <<= 20,
        "Gi" => num <<= 30,
        "Ti" => num <<= 40,
        "Pi" => num <<= 50,
        "Ei" => num <<= 60,
        s if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
            let e = &s[1..];
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let e: i32 = e.parse().ok()?;
            if e.abs() > 20 {
                return None;
            }
            if e >= 0 {
                num *= pow10(e as u32);
            } else {
                den *= pow10((-e) as u32);
            }
        }
        _ => return None,
    }
    Some((num, den))
}
