//! URLs as Go's `net/url.Parse` reads them, for the checks that quote Go's parse errors verbatim (`parse
//! "10.0.0.1:6443": first path segment in URL cannot contain colon`): Karmada's of a Cluster's `spec.apiEndpoint`
//! and `spec.proxyURL`, kube's of a webhook's URL.
//!
//! Only what those checks read is kept: scheme, user information, host, query and fragment. The rules are Go's:
//! a scheme is `[a-zA-Z][a-zA-Z0-9+.-]*` before the first `:`; `scheme:rest` without `/` is opaque (no host);
//! `//authority` holds the host; without a scheme, a first path segment holding `:` is an error.

use crate::field::FieldError;
use crate::validation::go_quote;

/// The parts of a parsed URL Karmada's checks read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Url {
    /// Lower-cased, empty when there is none.
    pub scheme: String,
    /// The user information before `@`, as written (Go's `Userinfo.String()` for what users write).
    pub user: Option<String>,
    /// `host[:port]`, empty when there is none.
    pub host: String,
    /// The query without `?`.
    pub raw_query: String,
    /// The fragment without `#`, unescaped.
    pub fragment: String,
}

impl Url {
    /// The errors of the parts a server's URL must not have (user information, a query, a fragment), at `field`,
    /// worded as kube's and Karmada's URL checks word them.
    pub fn disallowed_parts(&self, field: &str) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let Some(user) = &self.user {
            errors.push(FieldError::invalid(
                field,
                user.as_str(),
                "user information is not permitted in the URL",
            ));
        }
        if !self.fragment.is_empty() {
            errors.push(FieldError::invalid(
                field,
                self.fragment.as_str(),
                "fragments are not permitted in the URL",
            ));
        }
        if !self.raw_query.is_empty() {
            errors.push(FieldError::invalid(
                field,
                self.raw_query.as_str(),
                "query parameters are not permitted in the URL",
            ));
        }
        errors
    }
}

/// Parses `raw` as Go's `url.Parse` does.
///
/// # Errors
/// Go's error text, `parse "<url>": <why>`.
pub fn parse(raw: &str) -> Result<Url, String> {
    let (without_fragment, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = parse_without_fragment(without_fragment)
        .map_err(|why| format!("parse {}: {why}", go_quote(without_fragment)))?;
    if !fragment.is_empty() {
        url.fragment = unescape(fragment, Mode::Other)
            .map_err(|why| format!("parse {}: {why}", go_quote(raw)))?;
    }
    Ok(url)
}

fn parse_without_fragment(raw: &str) -> Result<Url, String> {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_owned());
    }
    let mut url = Url::default();
    if raw == "*" {
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        before
    } else {
        rest
    };
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // A rootless path after a scheme is opaque: no authority, no host.
            return Ok(url);
        }
        if rest
            .split('/')
            .next()
            .is_some_and(|segment| segment.contains(':'))
        {
            return Err("first path segment in URL cannot contain colon".to_owned());
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with("///"))
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, path) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        let (user, host) = authority.rfind('@').map_or((None, authority), |i| {
            (Some(&authority[..i]), &authority[i + 1..])
        });
        url.host = host_of(&url.scheme, host)?;
        if let Some(user) = user {
            if !user.chars().all(valid_userinfo) {
                return Err("net/url: invalid userinfo".to_owned());
            }
            for part in user.splitn(2, ':') {
                unescape(part, Mode::Other)?;
            }
            url.user = Some(user.to_owned());
        }
        unescape(path, Mode::Other)?;
    } else {
        unescape(rest, Mode::Other)?;
    }
    Ok(url)
}

/// Go's `getScheme`: the scheme and the rest, or no scheme when a character that cannot be in one comes first.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".to_owned()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseHost` for what Karmada's checks see: a bracketed IP literal or `host[:port]`, its port digits only.
fn host_of(scheme: &str, host: &str) -> Result<String, String> {
    let port_from = match host.rfind('[') {
        Some(i) if i > 0 => return Err("invalid IP-literal".to_owned()),
        Some(_) => {
            let close = host.rfind(']').ok_or("missing ']' in host")?;
            Some(close + 1)
        }
        None => host.find(':').map(|first| {
            let last = host.rfind(':').unwrap_or(first);
            // Go allows several colons (host lists) except in http and https URLs.
            if last != first && scheme != "http" && scheme != "https" {
                last
            } else {
                first
            }
        }),
    };
    if let Some(from) = port_from {
        let port = &host[from..];
        let valid = port.is_empty()
            || (port.starts_with(':') && port[1..].bytes().all(|b| b.is_ascii_digit()));
        if !valid {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
    }
    unescape(host, Mode::Host)
}

/// What a part of a URL may hold unescaped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The host: unreserved characters, sub-delimiters, `:`, `[`, `]`, `<`, `>`, `"` and non-ASCII bytes.
    Host,
    /// Anything else: only escapes are checked.
    Other,
}

/// Go's `unescape`: checks `%XX` escapes (and in a host its characters) and decodes them.
fn unescape(text: &str, mode: Mode) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let escape = &text[i..(i + 3).min(text.len())];
                let hex = bytes
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
                let Some(hex) = hex else {
                    return Err(format!("invalid URL escape {}", go_quote(escape)));
                };
                let value = u8::from_str_radix(std::str::from_utf8(hex).unwrap_or_default(), 16)
                    .unwrap_or_default();
                // In a host only non-ASCII bytes (and `%25` of a zone) may be escaped.
                if mode == Mode::Host && value < 0x80 && escape != "%25" {
                    return Err(format!("invalid URL escape {}", go_quote(escape)));
                }
                out.push(value);
                i += 3;
            }
            c if mode == Mode::Host && c < 0x80 && !host_byte(c) => {
                return Err(format!(
                    "invalid character {} in host name",
                    go_quote(&char::from(c).to_string())
                ));
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// An ASCII byte Go leaves unescaped in a host.
fn host_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'-' | b'_'
                | b'.'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
}

/// A character Go accepts in user information.
fn valid_userinfo(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '-' | '.'
                | '_'
                | ':'
                | '~'
                | '!'
                | '$'
                | '&'
                | '\''
                | '('
                | ')'
                | '*'
                | '+'
                | ','
                | ';'
                | '='
                | '%'
                | '@'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(raw: &str) -> Result<String, String> {
        parse(raw).map(|url| url.host)
    }

    #[test]
    fn endpoints_users_write() {
        let url = parse("https://10.0.0.1:6443/base").expect("parses");
        assert_eq!(
            (url.scheme.as_str(), url.host.as_str()),
            ("https", "10.0.0.1:6443")
        );
        assert_eq!(host("HTTPS://[::1]:443").as_deref(), Ok("[::1]:443"));
        assert_eq!(parse("HTTPS://x").map(|u| u.scheme).as_deref(), Ok("https"));
        // No scheme: the host is read as a path, or as a scheme when it starts with a letter.
        assert_eq!(host("member1.example.com").as_deref(), Ok(""));
        assert_eq!(host("localhost:6443").as_deref(), Ok(""));
        assert_eq!(
            parse("10.0.0.1:6443"),
            Err(
                "parse \"10.0.0.1:6443\": first path segment in URL cannot contain colon"
                    .to_owned()
            )
        );
        assert_eq!(
            parse(":6443"),
            Err("parse \":6443\": missing protocol scheme".to_owned())
        );
    }

    #[test]
    fn user_information_query_and_fragment() {
        let url = parse("https://admin:secret@m1:6443/?x=1#top").expect("parses");
        assert_eq!(url.user.as_deref(), Some("admin:secret"));
        assert_eq!(
            (url.raw_query.as_str(), url.fragment.as_str()),
            ("x=1", "top")
        );
        assert_eq!(parse("https://m1?").map(|u| u.raw_query).as_deref(), Ok(""));
        assert_eq!(
            parse("https://a b@m1"),
            Err("parse \"https://a b@m1\": net/url: invalid userinfo".to_owned())
        );
    }

    #[test]
    fn go_errors_for_bad_hosts_escapes_and_bytes() {
        assert_eq!(
            parse("https://m1:64x3"),
            Err("parse \"https://m1:64x3\": invalid port \":64x3\" after host".to_owned())
        );
        assert_eq!(
            parse("https://my host"),
            Err("parse \"https://my host\": invalid character \" \" in host name".to_owned())
        );
        assert_eq!(
            parse("https://m1/%zz"),
            Err("parse \"https://m1/%zz\": invalid URL escape \"%zz\"".to_owned())
        );
        assert_eq!(
            parse("https://m1#%g"),
            Err("parse \"https://m1#%g\": invalid URL escape \"%g\"".to_owned())
        );
        assert_eq!(
            parse("https://m1\n"),
            Err("parse \"https://m1\\n\": net/url: invalid control character in URL".to_owned())
        );
        assert_eq!(
            parse("https://x[::1]"),
            Err("parse \"https://x[::1]\": invalid IP-literal".to_owned())
        );
        assert_eq!(
            parse("http://a:1:2"),
            Err("parse \"http://a:1:2\": invalid port \":1:2\" after host".to_owned())
        );
        assert_eq!(
            parse("socks5://a:1,b:2").map(|u| u.host).as_deref(),
            Ok("a:1,b:2")
        );
    }
}
