//! Name and label format checks with the exact wording of Kubernetes' `util/validation` package.
//!
//! Each `is_*` function returns the list of problems (empty when the value is valid), worded as the real
//! API server words them, because clients and users match on these messages. Callers join the list with
//! `"; "` (as upstream does) and wrap it into a [`super::field::FieldError`].

/// Longest DNS-1123 label (and DNS-1035 label, label value and qualified-name name part).
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// Longest DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// Longest label value.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
const QUALIFIED_NAME_MAX_LENGTH: usize = 63;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Upstream's `RegexError`: the message, examples and the regular expression used.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    // Upstream's example list really carries two spaces before each " or "; clients see it verbatim.
    let mut out = format!("{msg} (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(example);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

/// Upstream's `MaxLenError`.
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// Upstream's `EmptyError`.
pub fn empty_error() -> &'static str {
    "must be non-empty"
}

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// Matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) => {
            is_lower_alnum(first)
                && is_lower_alnum(last)
                && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(matches_dns1123_label)
}

fn matches_dns1035_label(s: &str) -> bool {
    matches_dns1123_label(s) && s.as_bytes().first().is_some_and(|c| c.is_ascii_lowercase())
}

/// Matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn matches_qualified_name(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// DNS-1123 label (Namespace names, label-like names): at most 63 lower-case alphanumerics or '-'.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            // A valid subdomain that is not a label can only be failing on its dots.
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// DNS-1123 subdomain (most object names): at most 253 characters of dot-separated labels.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// DNS-1035 label (Service names): like a DNS-1123 label but starting with a letter.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1035_label(value) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// Qualified name (label and annotation keys, finalizers): `[prefix/]name`, the prefix a DNS-1123 subdomain; worded
/// as kube words a label key.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_ERR,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !matches_qualified_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Label value: empty, or at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !matches_qualified_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Path-segment name rules (RBAC objects and every name that ends up in a URL): not `.` or `..`, and no `/`
/// or `%`.
pub fn is_valid_path_segment_name(value: &str) -> Vec<String> {
    if value == "." || value == ".." {
        return vec![format!("may not be '{value}'")];
    }
    let mut errs = Vec::new();
    for illegal in ["/", "%"] {
        if value.contains(illegal) {
            errs.push(format!("may not contain '{illegal}'"));
        }
    }
    errs
}

/// Go's `%q` rendering of a string, which upstream uses for bad values in messages.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1123_label_cases() {
        for ok in ["a", "abc", "a-b", "0", "a1", &"a".repeat(63)] {
            assert!(is_dns1123_label(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            is_dns1123_label("a.b"),
            vec!["must not contain dots".to_string()]
        );
        assert_eq!(is_dns1123_label(&"a".repeat(64)), vec![max_len_error(63)]);
        let errs = is_dns1123_label("-ab");
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].starts_with("a lowercase RFC 1123 label must consist of"),
            "{errs:?}"
        );
        assert!(errs[0].ends_with(
            "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ));
        for bad in ["", "A", "ab-", "a_b", "ä"] {
            assert!(!is_dns1123_label(bad).is_empty(), "{bad}");
        }
    }

    #[test]
    fn dns1123_subdomain_cases() {
        for ok in [
            "a",
            "a.b",
            "example.com",
            "a-b.c-d.e",
            &format!("{}.{}", "a".repeat(63), "b".repeat(63)),
        ] {
            assert!(is_dns1123_subdomain(ok).is_empty(), "{ok}");
        }
        for bad in ["", ".a", "a.", "a..b", "A.b", "a_b", "a/b"] {
            assert!(!is_dns1123_subdomain(bad).is_empty(), "{bad}");
        }
        assert_eq!(
            is_dns1123_subdomain(&"a".repeat(254))[0],
            max_len_error(253)
        );
        assert_eq!(
            is_dns1123_subdomain("Foo")[0],
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must \
             start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
    }

    #[test]
    fn dns1035_label_cases() {
        assert!(is_dns1035_label("web").is_empty());
        assert!(is_dns1035_label("w-1").is_empty());
        assert!(!is_dns1035_label("1web").is_empty());
        assert!(!is_dns1035_label("web.x").is_empty());
    }

    #[test]
    fn qualified_name_cases() {
        for ok in ["app", "App_1.x", "example.com/app", "a/B", "k8s.io/x-y_z.1"] {
            assert!(is_qualified_name(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            is_qualified_name("/a"),
            vec!["prefix part must be non-empty".to_string()]
        );
        let errs = is_qualified_name("a/");
        assert_eq!(errs[0], "name part must be non-empty");
        assert_eq!(errs.len(), 2, "empty name also fails the regex: {errs:?}");
        assert!(is_qualified_name("a/b/c")[0].starts_with("a valid label key must consist of"));
        assert!(
            is_qualified_name("Ex.com/a")[0]
                .starts_with("prefix part a lowercase RFC 1123 subdomain")
        );
        assert_eq!(
            is_qualified_name("app:monolith"),
            vec![
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an \
                 alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
                 '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
                    .to_string()
            ]
        );
        assert_eq!(
            is_qualified_name(&"a".repeat(64))[0],
            "name part must be no more than 63 characters"
        );
    }

    #[test]
    fn label_value_cases() {
        for ok in ["", "a", "A-b_c.d", &"x".repeat(63)] {
            assert!(is_valid_label_value(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            is_valid_label_value(&"x".repeat(64)),
            vec![max_len_error(63)]
        );
        for bad in ["-a", "a-", "a b", "a/b"] {
            assert!(
                is_valid_label_value(bad)[0].starts_with("a valid label must be an empty string"),
                "{bad}"
            );
        }
    }

    #[test]
    fn path_segment_cases() {
        assert!(is_valid_path_segment_name("system:controller:x").is_empty());
        assert_eq!(
            is_valid_path_segment_name(".."),
            vec!["may not be '..'".to_string()]
        );
        assert_eq!(
            is_valid_path_segment_name("a/b%c"),
            vec!["may not contain '/'", "may not contain '%'"]
        );
    }

    #[test]
    fn go_quote_escapes() {
        assert_eq!(go_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(go_quote("\u{1}"), "\"\\x01\"");
    }
}
