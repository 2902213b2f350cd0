//! Kubernetes resource quantities (`100m`, `1.5Gi`, `1e3`): parse, add, compare and print in Kubernetes'
//! canonical form, exactly as `k8s.io/apimachinery/pkg/api/resource` does.
//!
//! k8s-openapi's `Quantity` is only the wire string, and the maintained arithmetic crates keep the input's
//! spelling instead of re-emitting the canonical form Kubernetes prints (`1.5Gi` is `1536Mi`, `1.5` is
//! `1500m`), so this module does it. Values are held exactly as a count of nano-units in an `i128`:
//! Kubernetes rounds every parsed quantity up to a whole nano-unit and caps its magnitude at 2^63-1, so
//! every quantity fits without loss.
//!
//! Guarantees: `parse(q.to_string()) == q` for every quantity (value and format); parsing never panics.

use std::cmp::Ordering;
use std::fmt;

mod parsed;

pub use parsed::{approximate_f64, decoded_text};

/// Nano-units per unit.
const NANO: i128 = 1_000_000_000;
/// The largest magnitude Kubernetes represents: 2^63-1 units, in nano-units.
const MAX_NANOS: i128 = (i64::MAX as i128) * NANO;

/// Why a string is not a quantity.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The string does not have the form `<signedNumber><suffix>`.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    /// The suffix is not one of Kubernetes' suffixes.
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// How a quantity prints: the kind of suffix it was written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Powers of ten with SI suffixes: `m`, `k`, `M`, `G`, ...
    DecimalSi,
    /// Powers of two: `Ki`, `Mi`, `Gi`, ...
    BinarySi,
    /// Powers of ten as an exponent: `1e3`, `5E-2`.
    DecimalExponent,
}

/// A resource quantity: an exact value and the format it prints in.
///
/// Equality and ordering compare values only (`1k == 1000 == 1e3`), as Kubernetes' `Quantity.Cmp` does.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    nanos: i128,
    format: Format,
}

impl Quantity {
    /// Zero, printed as `0`.
    pub const ZERO: Quantity = Quantity {
        nanos: 0,
        format: Format::DecimalSi,
    };

    /// Parses a quantity as Kubernetes' `ParseQuantity` does: values finer than a nano-unit round up (away
    /// from zero) and magnitudes above 2^63-1 are capped.
    ///
    /// # Errors
    /// [`QuantityError`] when `s` is empty, is not `<signedNumber><suffix>`, or has an unknown suffix.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        let parts = split(s)?;
        let (base, exponent, format) = interpret_suffix(parts.suffix)?;
        // Digits of the whole number with the decimal point after `point` digits.
        let mut digits: Vec<u8> = parts
            .num
            .bytes()
            .chain(parts.denom.bytes())
            .map(|b| b - b'0')
            .collect();
        let mut point = to_isize(parts.num.len());
        if base == 2 {
            for _ in 0..exponent {
                if double(&mut digits) {
                    point += 1;
                }
            }
        } else {
            point += exponent as isize;
        }
        let mut nanos = nanos_of(&digits, point);
        let mut format = format;
        if format == Format::BinarySi && nanos > 0 && nanos < NANO {
            // Kubernetes prints a fraction of a binary unit in decimal rather than rounding it.
            format = Format::DecimalSi;
        }
        if !parts.positive {
            nanos = -nanos;
        }
        Ok(Quantity { nanos, format })
    }

    /// `value` units in `format` (Kubernetes' `NewQuantity`).
    pub fn from_value(value: i64, format: Format) -> Quantity {
        Quantity {
            nanos: i128::from(value) * NANO,
            format,
        }
    }

    /// `milli` thousandths of a unit in `format` (Kubernetes' `NewMilliQuantity`).
    pub fn from_milli(milli: i64, format: Format) -> Quantity {
        Quantity {
            nanos: i128::from(milli) * 1_000_000,
            format,
        }
    }

    /// The format this quantity prints in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// The sum; it takes the format of `other` when `self` is zero, as Kubernetes' `Quantity.Add` does, so
    /// a sum prints in the format of its first non-zero addend. (`+` does the same.)
    #[must_use]
    #[allow(clippy::should_implement_trait)] // It is implemented too; the method needs no import.
    pub fn add(self, other: Quantity) -> Quantity {
        let format = if self.nanos == 0 {
            other.format
        } else {
            self.format
        };
        // Sums of capped values cannot overflow an i128; saturate anyway rather than trust that.
        Quantity {
            nanos: self.nanos.saturating_add(other.nanos),
            format,
        }
    }

    /// The value in whole units, rounded away from zero (Kubernetes' `Value`), saturating at the i64 range.
    pub fn value(&self) -> i64 {
        saturate(div_away(self.nanos, NANO))
    }

    /// The value in thousandths, rounded away from zero (Kubernetes' `MilliValue`), saturating.
    pub fn milli_value(&self) -> i64 {
        saturate(div_away(self.nanos, 1_000_000))
    }

    /// The value as a float, from its nano-units. Kubernetes' `AsApproximateFloat64` may differ in the last bit,
    /// as it depends on the spelling: see [`approximate_f64`].
    pub fn as_f64(&self) -> f64 {
        // The i128 to f64 conversion is the approximation; nothing else loses precision.
        #[allow(clippy::cast_precision_loss)]
        let nanos = self.nanos as f64;
        nanos / 1e9
    }

    /// The canonical string as a k8s-openapi quantity.
    pub fn to_k8s(&self) -> k8s_openapi::apimachinery::pkg::api::resource::Quantity {
        k8s_openapi::apimachinery::pkg::api::resource::Quantity(self.to_string())
    }

    /// Parses a k8s-openapi quantity.
    ///
    /// # Errors
    /// As [`Quantity::parse`].
    pub fn from_k8s(
        q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Result<Quantity, QuantityError> {
        Quantity::parse(&q.0)
    }
}

impl std::ops::Add for Quantity {
    type Output = Quantity;

    fn add(self, other: Quantity) -> Quantity {
        Quantity::add(self, other)
    }
}

impl std::iter::Sum for Quantity {
    fn sum<I: Iterator<Item = Quantity>>(iter: I) -> Quantity {
        iter.fold(Quantity::ZERO, |acc, q| acc + q)
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

impl fmt::Display for Quantity {
    /// Kubernetes' canonical form: no fractional digits, the largest suffix that loses no precision.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos == 0 {
            return f.write_str("0");
        }
        let mut format = self.format;
        if format == Format::BinarySi && (self.nanos.abs() < 1024 * NANO || self.nanos % NANO != 0)
        {
            // Small or fractional binary values print in decimal rather than lose precision.
            format = Format::DecimalSi;
        }
        if format == Format::BinarySi {
            let mut units = self.nanos / NANO;
            let mut power = 0;
            while units % 1024 == 0 && power < BINARY_SUFFIXES.len() - 1 {
                units /= 1024;
                power += 1;
            }
            return write!(f, "{units}{}", BINARY_SUFFIXES[power]);
        }
        let mut mantissa = self.nanos;
        let mut exponent: i32 = -9;
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        while exponent.rem_euclid(3) != 0 {
            mantissa *= 10;
            exponent -= 1;
        }
        match format {
            Format::DecimalExponent if exponent == 0 => write!(f, "{mantissa}"),
            Format::DecimalExponent => write!(f, "{mantissa}e{exponent}"),
            _ => {
                // The value range keeps the exponent within -9..=18, so the index is always in the table.
                let index = usize::try_from((exponent + 9) / 3).unwrap_or_default();
                write!(
                    f,
                    "{mantissa}{}",
                    DECIMAL_SUFFIXES.get(index).copied().unwrap_or_default()
                )
            }
        }
    }
}

/// Decimal SI suffixes from 10^-9 to 10^18, in steps of 10^3.
const DECIMAL_SUFFIXES: [&str; 10] = ["n", "u", "m", "", "k", "M", "G", "T", "P", "E"];
/// Binary SI suffixes from 2^0 to 2^60, in steps of 2^10.
const BINARY_SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// The pieces of a quantity string.
struct Parts<'a> {
    positive: bool,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// Splits `[+-]<digits>[.<digits>]<suffix>` as Kubernetes' `parseQuantityString` does.
fn split(s: &str) -> Result<Parts<'_>, QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::Format);
    }
    let (positive, rest) = match s.as_bytes()[0] {
        b'-' => (false, &s[1..]),
        b'+' => (true, &s[1..]),
        _ => (true, s),
    };
    let rest = rest.trim_start_matches('0');
    let num_end = rest
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(rest.len());
    let (num, mut rest) = rest.split_at(num_end);
    let mut denom = "";
    if let Some(after_point) = rest.strip_prefix('.') {
        let end = after_point
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(after_point.len());
        (denom, rest) = after_point.split_at(end);
    }
    // A suffix is letters from Kubernetes' suffix alphabet, then an optional signed exponent.
    let letters = rest
        .bytes()
        .take_while(|b| b"eEinumkKMGTP".contains(b))
        .count();
    let mut tail = &rest[letters..];
    if let Some(unsigned) = tail.strip_prefix(['-', '+']) {
        tail = unsigned;
    }
    if !tail.bytes().all(|b| b.is_ascii_digit()) {
        return Err(QuantityError::Format);
    }
    Ok(Parts {
        positive,
        num,
        denom,
        suffix: rest,
    })
}

/// Base (10 or 2), exponent and format of a suffix.
fn interpret_suffix(suffix: &str) -> Result<(u32, i32, Format), QuantityError> {
    let decimal = |exponent| Ok((10, exponent, Format::DecimalSi));
    let binary = |exponent| Ok((2, exponent, Format::BinarySi));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let exponent = suffix
                .strip_prefix(['e', 'E'])
                .filter(|e| !e.is_empty())
                .and_then(|e| e.parse::<i32>().ok())
                .ok_or(QuantityError::Suffix)?;
            Ok((10, exponent, Format::DecimalExponent))
        }
    }
}

/// Doubles a big-endian decimal digit vector in place; true when it grew by one digit.
fn double(digits: &mut Vec<u8>) -> bool {
    let mut carry = 0;
    for d in digits.iter_mut().rev() {
        let v = *d * 2 + carry;
        *d = v % 10;
        carry = v / 10;
    }
    if carry > 0 {
        digits.insert(0, carry);
        true
    } else {
        false
    }
}

/// The magnitude in nano-units of `digits` with the decimal point after `point` digits, rounded up to a
/// whole nano-unit and capped at [`MAX_NANOS`].
fn nanos_of(digits: &[u8], point: isize) -> i128 {
    if digits.iter().all(|d| *d == 0) {
        return 0;
    }
    let digit_at = |i: isize| -> u8 {
        usize::try_from(i)
            .ok()
            .and_then(|i| digits.get(i))
            .copied()
            .unwrap_or(0)
    };
    let mut nanos: i128 = 0;
    // Whole units and the first nine fractional digits, most significant first.
    let start = 0.min(point);
    for i in start..point + 9 {
        nanos = nanos * 10 + i128::from(digit_at(i));
        if nanos > MAX_NANOS {
            return MAX_NANOS;
        }
    }
    let rest_start = usize::try_from(point + 9).unwrap_or(0);
    if digits.iter().skip(rest_start).any(|d| *d != 0) {
        nanos += 1;
    }
    nanos.min(MAX_NANOS)
}

/// `n / d` rounded away from zero.
fn div_away(n: i128, d: i128) -> i128 {
    let q = n / d;
    if n % d == 0 {
        q
    } else if n > 0 {
        q + 1
    } else {
        q - 1
    }
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v > 0 { i64::MAX } else { i64::MIN })
}

fn to_isize(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

#[cfg(test)]
mod tests;
