//! The Kubernetes quantity format (`resource.Quantity`) parsed into exact integers.
//!
//! Grammar (as `k8s.io/apimachinery/pkg/api/resource` accepts it):
//! `[+-]` digits with an optional decimal point (`1`, `1.`, `.5`, `0.5`), then one suffix:
//! binary SI `Ki Mi Gi Ti Pi Ei`, decimal SI `m "" k M G T P E`, or a decimal exponent
//! `e<int>` / `E<int>` (`1e3`, `1.5E2`, `2e-3`). Nothing else: no spaces, no other units.
//!
//! Values are computed exactly (decimal digits, no floating point) and rounded as Kubernetes
//! rounds: away from zero, to the requested scale (`MilliValue`, `Value`). A value that does not
//! fit in an `i64` at that scale is an error, not a clamp. This module refuses to know what a
//! resource name means; [`super::resources`] picks the scale per resource.

/// Why a quantity string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// Not in the quantity grammar (empty, stray characters, unknown suffix, …).
    #[error("invalid quantity {0:?}")]
    Invalid(String),
    /// Well formed, but the value does not fit in an `i64` at the requested scale.
    #[error("quantity {0:?} is out of range")]
    Overflow(String),
}

/// A parsed quantity: `(-1)^negative × digits × 10^exp10 × 2^exp2`, exact.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parsed {
    negative: bool,
    /// Significant decimal digits (values 0–9), no leading zeros; empty means zero.
    digits: Vec<u8>,
    /// Power of ten applied to `digits` (saturated far beyond any `i64`).
    exp10: i64,
    /// Power of two from a binary suffix (0, 10, 20, …, 60).
    exp2: u32,
}

/// Largest exponent magnitude kept; anything beyond already over- or underflows an `i64`.
const EXP_SATURATION: i64 = 1_000_000;

fn parse(s: &str) -> Result<Parsed, QuantityError> {
    let invalid = || QuantityError::Invalid(s.to_string());
    let b = s.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if let Some(&c) = b.first() {
        if c == b'+' || c == b'-' {
            negative = c == b'-';
            i = 1;
        }
    }
    let mut digits: Vec<u8> = Vec::new();
    let mut frac_len: i64 = 0;
    let mut seen_digit = false;
    let mut seen_point = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            seen_digit = true;
            if !(digits.is_empty() && c == b'0') {
                digits.push(c - b'0');
            }
            if seen_point {
                frac_len += 1;
            }
        } else if c == b'.' && !seen_point {
            seen_point = true;
        } else {
            break;
        }
        i += 1;
    }
    if !seen_digit {
        return Err(invalid());
    }
    let (exp10, exp2) = match &s[i..] {
        "" => (0, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        rest if rest.len() > 1 && (rest.starts_with('e') || rest.starts_with('E')) => {
            (parse_exponent(&rest[1..]).ok_or_else(invalid)?, 0)
        }
        _ => return Err(invalid()),
    };
    // Trailing zeros of the significand move into the exponent, so `digits` stays short.
    let mut exp10 = exp10 - frac_len;
    while digits.last() == Some(&0) {
        digits.pop();
        exp10 += 1;
    }
    Ok(Parsed { negative, digits, exp10, exp2 })
}

/// A signed decimal integer, saturated at ±[`EXP_SATURATION`]. `None` when malformed.
fn parse_exponent(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() || !body.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut v: i64 = 0;
    for c in body.bytes() {
        v = (v * 10 + i64::from(c - b'0')).min(EXP_SATURATION);
    }
    Some(if neg { -v } else { v })
}

/// Multiplies a big-endian decimal digit vector by 2, in place.
fn double(digits: &mut Vec<u8>) {
    let mut carry = 0u8;
    for d in digits.iter_mut().rev() {
        let v = *d * 2 + carry;
        *d = v % 10;
        carry = v / 10;
    }
    if carry > 0 {
        digits.insert(0, carry);
    }
}

/// The value of `s` times `10^scale`, rounded away from zero to an integer.
fn scaled(s: &str, scale: i64) -> Result<i64, QuantityError> {
    let p = parse(s)?;
    if p.digits.is_empty() {
        return Ok(0);
    }
    let overflow = || QuantityError::Overflow(s.to_string());
    let shift = p.exp10 + scale;
    let len = p.digits.len() as i64;
    // 2^60 < 10^19, so the binary suffix adds at most 19 digits.
    if shift >= 0 && len - 1 + shift >= 19 {
        return Err(overflow());
    }
    let mut magnitude: u64 = if shift < 0 && -shift > len + 19 {
        // Every significant digit is below the unit: a non-zero value rounds up to 1.
        1
    } else {
        let mut digits = p.digits;
        if shift > 0 {
            digits.extend(std::iter::repeat_n(0, shift as usize));
        }
        for _ in 0..p.exp2 {
            double(&mut digits);
        }
        let keep = if shift < 0 { digits.len().saturating_sub((-shift) as usize) } else { digits.len() };
        let fraction = digits[keep..].iter().any(|&d| d != 0);
        let mut v: u64 = 0;
        for &d in &digits[..keep] {
            v = v.checked_mul(10).and_then(|v| v.checked_add(u64::from(d))).ok_or_else(overflow)?;
        }
        if fraction {
            v = v.checked_add(1).ok_or_else(overflow)?;
        }
        v
    };
    if p.negative {
        // i64::MIN's magnitude is one more than i64::MAX.
        if magnitude > i64::MAX as u64 + 1 {
            return Err(overflow());
        }
        magnitude = magnitude.wrapping_neg();
        Ok(magnitude as i64)
    } else {
        i64::try_from(magnitude).map_err(|_| overflow())
    }
}

/// The quantity in thousandths of a unit, rounded away from zero (Kubernetes `MilliValue`):
/// `"100m"` → 100, `"0.1"` → 100, `"2"` → 2000, `"1e3"` → 1_000_000.
///
/// Errors: [`QuantityError::Invalid`] when `q` is not a quantity, [`QuantityError::Overflow`]
/// when the result does not fit in an `i64`.
pub fn to_milli(q: &str) -> Result<i64, QuantityError> {
    scaled(q, 3)
}

/// The quantity in whole units, rounded away from zero (Kubernetes `Value`): `"1Ki"` → 1024,
/// `"1.5Gi"` → 1_610_612_736, `"100m"` → 1.
///
/// Errors: as [`to_milli`].
pub fn to_units(q: &str) -> Result<i64, QuantityError> {
    scaled(q, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milli_and_units_table() {
        // (input, milli, units)
        let ok: &[(&str, i64, i64)] = &[
            ("0", 0, 0),
            ("1", 1000, 1),
            ("100m", 100, 1),
            ("1m", 1, 1),
            ("0.1", 100, 1),
            ("0.5", 500, 1),
            (".5", 500, 1),
            ("1.", 1000, 1),
            ("+2", 2000, 2),
            ("-1", -1000, -1),
            ("-100m", -100, -1),
            ("1k", 1_000_000, 1000),
            ("1Ki", 1_024_000, 1024),
            ("1Mi", 1_048_576_000, 1_048_576),
            ("1.5Gi", 1_610_612_736_000, 1_610_612_736),
            ("4G", 4_000_000_000_000, 4_000_000_000),
            ("1Ti", 1_099_511_627_776_000, 1_099_511_627_776),
            ("1e3", 1_000_000, 1000),
            ("1E3", 1_000_000, 1000),
            ("1.5E2", 150_000, 150),
            ("2e-3", 2, 1),
            ("1e-9", 1, 1),
            ("0.0001", 1, 1),
            ("1.0001", 1001, 2),
            ("0.000m", 0, 0),
            ("-0", 0, 0),
        ];
        for &(q, milli, units) in ok {
            assert_eq!(to_milli(q), Ok(milli), "to_milli({q:?})");
            assert_eq!(to_units(q), Ok(units), "to_units({q:?})");
        }
        assert_eq!(to_units("1E"), Ok(1_000_000_000_000_000_000));
        assert_eq!(to_units("1Ei"), Ok(1 << 60));
        assert_eq!(to_units("7Ei"), Ok(7 << 60));
        assert_eq!(to_units("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(to_units("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(to_milli("1.000000000000000000000000000001"), Ok(1001));
        assert_eq!(to_milli("1e-999999999999"), Ok(1));
        assert_eq!(to_milli("-1e-999999999999"), Ok(-1));
        assert_eq!(to_milli("0e999999999999"), Ok(0));
    }

    #[test]
    fn malformed_and_overflowing_table() {
        let invalid = [
            "", "abc", "1.2.3", "5Xi", "1ki", "1K", "Ki", ".", "-", "+", "1 ", " 1", "1e", "1e3m", "1mi", "1..2", "--1", "1e+",
            "0x10", "1,5", "１",
        ];
        for q in invalid {
            assert_eq!(to_milli(q), Err(QuantityError::Invalid(q.to_string())), "to_milli({q:?})");
            assert_eq!(to_units(q), Err(QuantityError::Invalid(q.to_string())), "to_units({q:?})");
        }
        let overflow = ["8Ei", "9223372036854775808", "1e19", "1e999999999999", "10E", "-9223372036854775809"];
        for q in overflow {
            assert_eq!(to_units(q), Err(QuantityError::Overflow(q.to_string())), "to_units({q:?})");
        }
        assert_eq!(to_milli("9223372036854775807"), Err(QuantityError::Overflow("9223372036854775807".into())));
        assert_eq!(to_milli("10P"), Err(QuantityError::Overflow("10P".into())));
        assert_eq!(to_units("10P"), Ok(10_000_000_000_000_000));
    }

    #[test]
    fn error_messages_quote_the_input() {
        assert_eq!(to_milli("abc").unwrap_err().to_string(), "invalid quantity \"abc\"");
        assert_eq!(to_units("1e30").unwrap_err().to_string(), "quantity \"1e30\" is out of range");
    }
}
