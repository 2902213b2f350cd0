use super::*;

fn q(s: &str) -> Quantity {
    match Quantity::parse(s) {
        Ok(q) => q,
        Err(e) => panic!("{s}: {e}"),
    }
}

#[test]
fn canonical_forms() {
    let cases = [
        ("0", "0"),
        ("000", "0"),
        ("1", "1"),
        ("100m", "100m"),
        ("1.5", "1500m"),
        ("0.5", "500m"),
        (".5", "500m"),
        ("1000m", "1"),
        ("2000m", "2"),
        ("1300m", "1300m"),
        ("1000", "1k"),
        ("1k", "1k"),
        ("1500", "1500"),
        ("1e3", "1e3"),
        ("1E3", "1e3"),
        ("1e0", "1"),
        ("12e1", "120"),
        ("1e-3", "1e-3"),
        ("100M", "100M"),
        ("1.2G", "1200M"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1024", "1024"),
        ("1Ki", "1Ki"),
        ("512", "512"),
        ("0.5Ki", "512"),
        ("1023Ki", "1023Ki"),
        ("1.5Ki", "1536"),
        ("0.1Ki", "102400m"),
        ("1073741824", "1073741824"),
        ("-1", "-1"),
        ("-100m", "-100m"),
        ("+5", "5"),
        ("0.1m", "100u"),
        ("1n", "1n"),
        ("0.0000000001", "1n"),
        ("1.0000000001", "1000000001n"),
        ("1.G", "1G"),
        ("1Ei", "1Ei"),
        ("8Ei", "9223372036854775807"),
        ("1e30", "9223372036854775807"),
        ("0e999999999", "0"),
        ("1e-999999999", "1e-9"),
        ("20E", "9223372036854775807"),
    ];
    for (input, canonical) in cases {
        assert_eq!(q(input).to_string(), canonical, "canonical form of {input}");
        assert_eq!(q(canonical), q(input), "round trip of {input}");
    }
}

#[test]
fn rejects_malformed() {
    for bad in [
        "", "abc", "1x", "1KI", "1e", "1.5.5", "1 Gi", "1Gi2", "1e3.5", "--1", "1m2m",
    ] {
        assert!(Quantity::parse(bad).is_err(), "{bad:?} must not parse");
    }
}

#[test]
fn sums_take_the_first_non_zero_format() {
    let cases: [(&[&str], &str); 7] = [
        (&["100m", "1.2"], "1300m"),
        (&["100M", "1.2G"], "1300M"),
        (&["0", "1Gi", "1Gi"], "2Gi"),
        (&["1Gi", "1000"], "1073742824"),
        (&["1k", "24"], "1024"),
        (&["512Mi", "512Mi"], "1Gi"),
        (&["500m", "500m"], "1"),
    ];
    for (addends, sum) in cases {
        let total: Quantity = addends.iter().map(|a| q(a)).sum();
        assert_eq!(total.to_string(), sum, "sum of {addends:?}");
    }
    assert_eq!(Quantity::ZERO.to_string(), "0");
}

#[test]
fn values_round_away_from_zero() {
    assert_eq!(q("100m").milli_value(), 100);
    assert_eq!(q("0.1m").milli_value(), 1);
    assert_eq!(q("1.5").value(), 2);
    assert_eq!(q("-1.5").value(), -2);
    assert_eq!(q("1Gi").value(), 1_073_741_824);
    assert_eq!(q("2").milli_value(), 2000);
    assert_eq!(q("1e30").value(), i64::MAX);
    assert!((q("100m").as_f64() - 0.1).abs() < 1e-12);
    assert!((q("1Gi").as_f64() - 1_073_741_824.0).abs() < 1e-3);
}

#[test]
fn compares_values_not_spelling() {
    assert_eq!(q("1k"), q("1000"));
    assert_eq!(q("1e3"), q("1k"));
    assert!(q("1Ki") > q("1k"));
    assert!(q("999m") < q("1"));
    assert!(q("-1") < q("0"));
}

#[test]
fn constructors_print_like_kubernetes() {
    assert_eq!(
        Quantity::from_milli(1300, Format::DecimalSi).to_string(),
        "1300m"
    );
    assert_eq!(
        Quantity::from_milli(2000, Format::DecimalSi).to_string(),
        "2"
    );
    assert_eq!(
        Quantity::from_value(1_073_741_824, Format::BinarySi).to_string(),
        "1Gi"
    );
    assert_eq!(
        Quantity::from_value(1_300_000_000, Format::BinarySi).to_string(),
        "1300000000"
    );
    assert_eq!(
        Quantity::from_value(512, Format::BinarySi).to_string(),
        "512"
    );
    assert_eq!(Quantity::from_value(3, Format::DecimalSi).to_string(), "3");
    assert_eq!(
        Quantity::from_value(1000, Format::DecimalSi).to_string(),
        "1k"
    );
}

mod properties {
    use proptest::prelude::*;

    use super::super::Quantity;

    const SUFFIXES: [&str; 21] = [
        "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3",
        "E-2", "e0", "e-9", "e12",
    ];

    fn quantity_text() -> impl Strategy<Value = String> {
        (
            "[-+]?",
            "[0-9]{0,10}",
            proptest::option::of("[0-9]{0,10}"),
            0..SUFFIXES.len(),
        )
            .prop_map(|(sign, whole, fraction, suffix)| {
                let whole = if whole.is_empty() && fraction.as_deref().is_none_or(str::is_empty) {
                    "0".to_owned()
                } else {
                    whole
                };
                match fraction {
                    Some(fraction) => format!("{sign}{whole}.{fraction}{}", SUFFIXES[suffix]),
                    None => format!("{sign}{whole}{}", SUFFIXES[suffix]),
                }
            })
    }

    proptest! {
        #[test]
        fn canonical_form_round_trips(text in quantity_text()) {
            let q = Quantity::parse(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            let canonical = q.to_string();
            prop_assert!(!canonical.contains('.'), "{text} printed {canonical}");
            let again = Quantity::parse(&canonical).map_err(|e| TestCaseError::fail(format!("{canonical}: {e}")))?;
            prop_assert_eq!(again, q, "{} -> {}", text, canonical);
            prop_assert_eq!(again.to_string(), canonical.clone(), "canonical form is a fixed point: {}", text);
            let approx: f64 = text.parse().unwrap_or(f64::NAN);
            if approx.is_finite() && !text.contains(['e', 'E']) {
                // Suffix-free decimals: the exact value is within a nano-unit of the float reading.
                prop_assert!((q.as_f64() - approx).abs() <= 1e-9 * approx.abs().max(1.0) + 1e-9, "{} vs {}", q.as_f64(), approx);
            }
        }

        #[test]
        fn addition_is_exact_and_commutative_in_value(a in quantity_text(), b in quantity_text()) {
            let (qa, qb) = (Quantity::parse(&a).map_err(|e| TestCaseError::fail(e.to_string()))?, Quantity::parse(&b).map_err(|e| TestCaseError::fail(e.to_string()))?);
            prop_assert_eq!(qa + qb, qb + qa);
            // Like Kubernetes, sums are not capped but parsing is: only sums in range round-trip.
            prop_assume!((qa + qb).nanos.abs() <= super::super::MAX_NANOS);
            prop_assert_eq!(Quantity::parse(&(qa + qb).to_string()).map_err(|e| TestCaseError::fail(e.to_string()))?, qa + qb);
        }
    }
}

/// What Kubernetes' `Quantity` gives back after a JSON decode and encode, and its `AsApproximateFloat64`, as
/// k8s.io/apimachinery (the copy Karmada v1.18.2 vendors) answered for each text.
#[test]
fn decoded_text_and_approximate_value_follow_kubernetes() {
    let cases: &[(&str, &str, f64)] = &[
        ("2.048", "2.048", 2.048),
        ("0.5", "500m", 0.5),
        ("1000m", "1", 1.0),
        ("1.50", "1500m", 1.5),
        ("1000", "1k", 1000.0),
        ("0.1Gi", "107374182400m", 1.073741824e8),
        ("1408.000000Mi", "1408Mi", 1.476395008e9),
        ("+1", "+1", 1.0),
        ("100m", "100m", 0.1),
        ("1Gi", "1Gi", 1.073741824e9),
        ("1024Ki", "1Mi", 1.048576e6),
        ("1025Ki", "1025Ki", 1.0496e6),
        ("1e3", "1e3", 1000.0),
        ("12e2", "1200", 1200.0),
        ("1.1", "1100m", 1.1),
        ("0.3", "300m", 0.300_000_000_000_000_04),
        ("3e-1", "300e-3", 0.300_000_000_000_000_04),
        ("2048m", "2048m", 2.048),
        ("1.5Gi", "1536Mi", 1.610612736e9),
        ("0.7", "700m", 0.700_000_000_000_000_1),
        (
            "123456789.123456789",
            "123456789.123456789",
            1.234_567_891_234_567_9e8,
        ),
        ("1e-10", "1e-9", 1e-9),
        ("-1", "-1", -1.0),
        ("0", "0", 0.0),
        ("00", "0", 0.0),
        ("-0", "0", 0.0),
        ("1.5M", "1500k", 1.5e6),
        ("2Ei", "2Ei", 2.305_843_009_213_694e18),
        ("9Ei", "9223372036854775807", 9.223_372_036_854_776e18),
        ("1e30", "1e30", 1e30),
        ("0.000001", "1u", 1e-6),
        ("1E3", "1E3", 1000.0),
        (".5", "500m", 0.5),
        ("5.", "5.", 5.0),
        ("1e+21", "1e+21", 1e21),
    ];
    for (text, decoded, approximate) in cases {
        assert_eq!(decoded_text(text).as_deref(), Ok(*decoded), "{text}");
        assert_eq!(approximate_f64(text), Ok(*approximate), "{text}");
    }
    // The JSON decoder trims spaces around the text; `ParseQuantity` alone does not.
    assert_eq!(decoded_text(" 2 ").as_deref(), Ok("2"));
    assert_eq!(approximate_f64(" 2 "), Err(QuantityError::Format));
    for bad in ["abc", "", "1.2.3"] {
        assert_eq!(decoded_text(bad), Err(QuantityError::Format), "{bad}");
    }
}
