//! Go-compatible text forms of numbers and dates, so that values a script prints or compares look as they do under
//! Karmada's gopher-lua: `tostring`, `tonumber` and `os.date`.

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// 2^63: integral doubles in `[-2^63, 2^63)` are int64 values.
pub(crate) const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// `tostring` of a Lua number as gopher-lua prints it: integral values that fit an int64 without a decimal point,
/// everything else in Go's shortest `%v` form (`0.1`, `1.2345675e+06`, `1e-05`, `NaN`, `+Inf`).
pub fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_owned();
    }
    if n.is_infinite() {
        return if n > 0.0 {
            "+Inf".to_owned()
        } else {
            "-Inf".to_owned()
        };
    }
    if n.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&n) {
        return format!("{}", n as i64);
    }
    go_shortest_g(n)
}

/// Go's `strconv.FormatFloat(n, 'g', -1, 64)` (what `fmt` prints for `%v`): the shortest round-trip digits, in
/// exponent form (`1.2345675e+06`, `1e-05`) when the decimal exponent is below -4 or at least 6.
fn go_shortest_g(n: f64) -> String {
    let (sign, digits, exp) = shortest_digits(n);
    if !(-4..6).contains(&exp) {
        return exponent_form(sign, &digits, exp, 2);
    }
    fixed_form(sign, &digits, exp)
}

/// A float as Go's `encoding/json` writes it: the shortest round-trip digits, in exponent
/// form (`1e+21`, `1e-7`) when the magnitude is below 1e-6 or at least 1e21, else without one (`0.000001`,
/// `100000000000000000000`). This is the text Go hands a JSON-decoded quantity.
pub fn json_number(n: f64) -> String {
    let (sign, digits, exp) = shortest_digits(n);
    let abs = n.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        return exponent_form(sign, &digits, exp, 1);
    }
    fixed_form(sign, &digits, exp)
}

/// The sign, shortest round-trip digits and decimal exponent of `n` (`d.ddd × 10^exp`).
fn shortest_digits(n: f64) -> (&'static str, String, i32) {
    // Rust's `{:e}` gives the same shortest round-trip digits as Go, as `d.ddddde[-]x`.
    let sci = format!("{n:e}");
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let sign = if mantissa.starts_with('-') { "-" } else { "" };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (sign, digits, exp)
}

/// `d.ddde±x`, the exponent with at least `width` digits.
fn exponent_form(sign: &str, digits: &str, exp: i32, width: usize) -> String {
    let mut out = String::from(sign);
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    out.push_str(&format!("{:0width$}", exp.unsigned_abs()));
    out
}

/// The digits with the decimal point placed, zeros added as needed.
fn fixed_form(sign: &str, digits: &str, exp: i32) -> String {
    let nd = digits.len() as i32;
    let dp = exp + 1;
    let mut out = String::from(sign);
    if dp <= 0 {
        out.push_str("0.");
        for _ in 0..(-dp) {
            out.push('0');
        }
        out.push_str(digits);
    } else if dp >= nd {
        out.push_str(digits);
        for _ in 0..(dp - nd) {
            out.push('0');
        }
    } else {
        let (int_part, frac) = digits.split_at(dp as usize);
        out.push_str(int_part);
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// `tonumber(v)` of a string as gopher-lua parses it: surrounding spaces, tabs and newlines
/// are ignored; a string containing `.` is a float, one starting with `0x`/`0X` is hexadecimal, anything else must be
/// a signed base-10 64-bit integer. `None` when it does not parse.
pub fn parse_number(text: &str) -> Option<f64> {
    let text = text.trim_matches(|c| c == ' ' || c == '\t' || c == '\n');
    if text.contains('.') {
        return parse_go_float(text);
    }
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    text.parse::<i64>().ok().map(|n| n as f64)
}

/// Go's `strconv.ParseFloat` for the decimal forms a script can write (`1.5`, `.5`, `-2.`, `1.5e3`); Rust's parser
/// additionally accepts `inf`/`nan` spellings, which cannot contain a `.` and so never reach here.
fn parse_go_float(text: &str) -> Option<f64> {
    if text.is_empty() || text.contains('_') {
        return None;
    }
    text.parse::<f64>().ok()
}

/// A broken-down time, the table `os.date("*t")` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateTable {
    /// Four-digit year.
    pub year: i64,
    /// 1-12.
    pub month: i64,
    /// 1-31.
    pub day: i64,
    /// 0-23.
    pub hour: i64,
    /// 0-59.
    pub min: i64,
    /// 0-59.
    pub sec: i64,
    /// 1 (Sunday) to 7.
    pub wday: i64,
}

/// What `os.date` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DateOutput {
    /// A formatted string.
    Text(String),
    /// The `*t` table.
    Table(DateTable),
}

/// `os.date([format[, time]])` as Karmada's restricted os library computes it: default format
/// `%c`; a leading `!` means UTC (but an explicit time is always shown in local time, as gopher-lua does); `*t`
/// returns a table; conversions follow Go layouts, unknown ones are copied literally.
pub fn os_date(
    format: Option<&str>,
    time: Option<i64>,
    now: Timestamp,
    local: &TimeZone,
) -> DateOutput {
    let mut zone = local.clone();
    let mut at = now;
    let mut format = format.unwrap_or("%c");
    if let Some(rest) = format.strip_prefix('!') {
        zone = TimeZone::UTC;
        format = rest.trim_start_matches('!');
    }
    if let Some(secs) = time {
        zone = local.clone();
        at = Timestamp::from_second(secs).unwrap_or(now);
    }
    let zoned = at.to_zoned(zone);
    if format.starts_with("*t") {
        return DateOutput::Table(DateTable {
            year: i64::from(zoned.year()),
            month: i64::from(zoned.month()),
            day: i64::from(zoned.day()),
            hour: i64::from(zoned.hour()),
            min: i64::from(zoned.minute()),
            sec: i64::from(zoned.second()),
            wday: i64::from(zoned.weekday().to_sunday_zero_offset()) + 1,
        });
    }
    DateOutput::Text(strftime(&zoned, format))
}

/// The conversions of gopher-lua's `strftime`, each mapped to the Go layout it uses, spelled as jiff directives.
fn conversion(flag: u8) -> Option<&'static str> {
    Some(match flag {
        // Go's layout for %a is the lower-case "mon", which is not a layout token: it prints literally.
        b'a' => "mon",
        b'A' => "%A",
        b'b' => "%b",
        b'B' => "%B",
        b'c' => "%d %b %y %H:%M %Z",
        b'd' => "%d",
        b'F' => "%Y-%m-%d",
        b'H' => "%H",
        b'I' => "%I",
        b'm' => "%m",
        b'M' => "%M",
        b'p' => "%p",
        b'P' => "%P",
        b'S' => "%S",
        // Go's layout for %x is "15/04/05": hours, minutes and seconds.
        b'x' => "%H/%M/%S",
        b'X' => "%H:%M:%S",
        b'y' => "%y",
        b'Y' => "%Y",
        b'z' => "%z",
        b'Z' => "%Z",
        _ => return None,
    })
}

fn strftime(zoned: &jiff::Zoned, format: &str) -> String {
    let bytes = format.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c != b'%' || i + 1 == bytes.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let flag = bytes[i + 1];
        i += 2;
        if flag == b'%' {
            out.push(b'%');
        } else if flag == b'w' {
            out.extend_from_slice(
                zoned
                    .weekday()
                    .to_sunday_zero_offset()
                    .to_string()
                    .as_bytes(),
            );
        } else if let Some(directive) = conversion(flag) {
            out.extend_from_slice(zoned.strftime(directive).to_string().as_bytes());
        } else {
            out.push(b'%');
            out.push(flag);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_like_gopher_lua() {
        for (n, want) in [
            (3.0, "3"),
            (-2.0, "-2"),
            (0.0, "0"),
            (-0.0, "0"),
            (2147483648.0, "2147483648"),
            (0.1, "0.1"),
            (2.5, "2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1234567.5, "1.2345675e+06"),
            (123456.5, "123456.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-1.5e-7, "-1.5e-07"),
            (1e19, "1e+19"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
        ] {
            assert_eq!(number_to_string(n), want, "{n}");
        }
    }

    /// Go's `json.Marshal(float64)`: no exponent between 1e-6 and 1e21, a one-digit exponent outside.
    #[test]
    fn json_numbers_print_like_go() {
        for (n, want) in [
            (3.0, "3"),
            (2.048, "2.048"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (-1.5e-7, "-1.5e-7"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1152921504606846976.0, "1152921504606847000"),
            (0.0, "0"),
        ] {
            assert_eq!(json_number(n), want, "{n}");
        }
    }

    #[test]
    fn tonumber_follows_gopher_lua_rules() {
        assert_eq!(parse_number(" 42\n"), Some(42.0));
        assert_eq!(parse_number("-7"), Some(-7.0));
        assert_eq!(parse_number("+7"), Some(7.0));
        assert_eq!(parse_number("2.5"), Some(2.5));
        assert_eq!(parse_number("1.5e3"), Some(1500.0));
        assert_eq!(parse_number("0x1F"), Some(31.0));
        assert_eq!(parse_number("1e3"), None);
        assert_eq!(parse_number("not-a-number"), None);
        assert_eq!(parse_number(""), None);
        assert_eq!(parse_number("99999999999999999999"), None);
    }

    #[test]
    fn os_date_uses_go_layouts() {
        // Mon Jan 2 15:04:05 2006 UTC, Go's reference time.
        let now = Timestamp::from_second(1_136_214_245).unwrap();
        let utc = TimeZone::UTC;
        let text = |f: &str| match os_date(Some(f), None, now, &utc) {
            DateOutput::Text(t) => t,
            DateOutput::Table(_) => panic!("table"),
        };
        assert_eq!(text("!%Y-%m-%dT%H:%M:%SZ"), "2006-01-02T15:04:05Z");
        assert_eq!(text("!%a %A %b %B %w"), "mon Monday Jan January 1");
        assert_eq!(
            text("!%x|%X|%F|%y|%I %p|%P"),
            "15/04/05|15:04:05|2006-01-02|06|03 PM|pm"
        );
        assert_eq!(text("!%c"), "02 Jan 06 15:04 UTC");
        assert_eq!(text("!%e %% %"), "%e % %");
        let DateOutput::Table(t) = os_date(Some("!*t"), None, now, &utc) else {
            panic!("text")
        };
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.min, t.sec, t.wday),
            (2006, 1, 2, 15, 4, 5, 2)
        );
    }
}
