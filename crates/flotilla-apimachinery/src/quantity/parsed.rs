//! What Kubernetes keeps of the text a quantity was parsed from.
//!
//! `ParseQuantity` holds most quantities as an integer and a decimal scale, and keeps the input text when it
//! judges it already canonical (`2.048`, `100m`, `1Gi`). Two answers Karmada gives scripts depend on that, beyond
//! the value itself:
//! * a quantity decoded from JSON and encoded again (a script's replica requirements and components) comes back as
//!   the kept text, or in canonical form when none was kept (`1408.000000Mi` is `1408Mi`, `0.5` is `500m`, but
//!   `2.048` stays `2.048`);
//! * `AsApproximateFloat64` (`kube.getResourceQuantity`) multiplies that integer by a power of ten, so its rounding
//!   follows the spelling (`1.1` and `1100m` may differ in the last bit).

use super::{Format, Quantity, QuantityError, interpret_suffix, split};

/// The fast path of `ParseQuantity`: the integer amount, its decimal scale, and whether the text is kept.
struct Amount {
    value: i64,
    scale: i32,
    keeps_text: bool,
}

/// `ParseQuantity`'s integer form of `text`, when it has one (otherwise Kubernetes holds an arbitrary-precision
/// decimal rounded up to nano-units).
fn amount(text: &str) -> Result<Option<Amount>, QuantityError> {
    let parts = split(text)?;
    let (_, exponent, format) = interpret_suffix(parts.suffix)?;
    // Kubernetes' numerator is never empty: leading zeros stripped to nothing leave "0".
    let num = if parts.num.is_empty() { "0" } else { parts.num };
    let digits = (num.len() + parts.denom.len()) as i32;
    let (mut scale, precision, mantissa) = match format {
        Format::DecimalSi | Format::DecimalExponent => (exponent, 18 - digits, 1_i64),
        Format::BinarySi if exponent >= 0 && parts.denom.is_empty() => {
            // Kubernetes estimates a binary suffix's decimal digits in float32 and truncates.
            let suffix_digits = (exponent as f32 * 3.0 / 10.0) as i32;
            (
                0,
                15 - num.len() as i32 - suffix_digits - 1,
                1_i64 << exponent,
            )
        }
        Format::BinarySi => (0, -1, 1),
    };
    if precision < 0 {
        return Ok(None);
    }
    scale -= parts.denom.len() as i32;
    if scale < -9 {
        return Ok(None);
    }
    let shifted = format!("{num}{}", parts.denom);
    // At most 18 digits, so it always fits.
    let value: i64 = shifted.parse().map_err(|_| QuantityError::Format)?;
    let Some(result) = value.checked_mul(mantissa) else {
        return Ok(None);
    };
    let keeps_text = match format {
        Format::BinarySi => exponent % 10 == 0 && value & 0x07 != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    Ok(Some(Amount {
        value: if parts.positive { result } else { -result },
        scale,
        keeps_text,
    }))
}

/// The text Kubernetes writes for a quantity it decoded from the JSON text `raw` (a string's contents or a
/// number's digits): `Quantity.UnmarshalJSON` then `MarshalJSON`.
///
/// # Errors
/// [`QuantityError`] when the trimmed text is not a quantity, as Kubernetes refuses it.
pub fn decoded_text(raw: &str) -> Result<String, QuantityError> {
    let text = raw.trim();
    if text == "0" {
        return Ok(text.to_owned());
    }
    let quantity = Quantity::parse(text)?;
    if amount(text)?.is_some_and(|a| a.keeps_text) {
        return Ok(text.to_owned());
    }
    Ok(quantity.to_string())
}

/// `AsApproximateFloat64` of the quantity `text` parses to: the integer amount times a power of ten, as Kubernetes
/// computes it.
///
/// # Errors
/// [`QuantityError`] when `text` is not a quantity.
pub fn approximate_f64(text: &str) -> Result<f64, QuantityError> {
    if text == "0" {
        return Ok(0.0);
    }
    let quantity = Quantity::parse(text)?;
    if let Some(a) = amount(text)? {
        #[allow(clippy::cast_precision_loss)] // Kubernetes converts the same way.
        let base = a.value as f64;
        return Ok(if a.scale == 0 {
            base
        } else {
            base * go_pow10(a.scale)
        });
    }
    if quantity.format == Format::BinarySi && quantity.nanos.abs() == super::MAX_NANOS {
        // Kubernetes caps a binary quantity at 2^63-1 units, held without a fraction.
        #[allow(clippy::cast_precision_loss)]
        let cap = i64::MAX as f64;
        return Ok(if quantity.nanos < 0 { -cap } else { cap });
    }
    // Otherwise Kubernetes holds a count of nano-units, then multiplies it by 10^-9.
    #[allow(clippy::cast_precision_loss)]
    let nanos = quantity.nanos as f64;
    Ok(nanos * go_pow10(-9))
}

/// Go's `math.Pow10`, from the same tables, so that products round as they do in Go.
fn go_pow10(n: i32) -> f64 {
    const TAB: [f64; 32] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    ];
    const POS32: [f64; 10] = [
        1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
    ];
    const NEG32: [f64; 11] = [
        1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320,
    ];
    let at = |n: i32| n.unsigned_abs() as usize;
    if (0..=308).contains(&n) {
        POS32[at(n) / 32] * TAB[at(n) % 32]
    } else if (-323..=0).contains(&n) {
        NEG32[at(n) / 32] / TAB[at(n) % 32]
    } else if n > 0 {
        f64::INFINITY
    } else {
        0.0
    }
}
