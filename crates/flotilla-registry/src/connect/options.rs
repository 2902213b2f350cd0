//! The options of `pods/log` (`PodLogOptions`) and `pods/exec` (`PodExecOptions`) as kube-apiserver reads them from
//! the query (its generated `url.Values` conversions), validates them, and passes them on to the kubelet.

use flotilla_apimachinery::field::FieldError;

use crate::status::{ApiError, ApiResult};
use crate::validation::invalid_status;

/// The first value of `key` in `query`, when it is there at all.
fn first<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A boolean query parameter as kube converts one: absent, `0` or `false` (any case) is false, anything else,
/// the empty string included, is true.
fn flag(query: &[(String, String)], key: &str) -> bool {
    first(query, key).is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// An integer query parameter (Go's `strconv.ParseInt`, base 10).
fn integer(query: &[(String, String)], key: &str) -> ApiResult<Option<i64>> {
    let Some(raw) = first(query, key) else {
        return Ok(None);
    };
    raw.parse::<i64>().map(Some).map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing \"{raw}\": {why}"))
    })
}

/// A time query parameter: RFC 3339, read as kube reads `metav1.Time` from a query (the empty string and `null` are
/// the zero time), and written back as Go's `time.RFC3339` formats it (whole seconds, UTC here).
fn time(query: &[(String, String)], key: &str) -> ApiResult<Option<String>> {
    let Some(raw) = first(query, key) else {
        return Ok(None);
    };
    if raw.is_empty() || raw == "null" {
        return Ok(Some("0001-01-01T00:00:00Z".to_string()));
    }
    let at: jiff::Timestamp = raw.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "parsing time \"{raw}\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"{raw}\" as RFC 3339"
        ))
    })?;
    Ok(Some(at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()))
}

/// `PodLogOptions`: what `pods/log` is asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// `container`: the container, or none to take the pod's only one.
    pub container: Option<String>,
    /// `follow`: keep streaming while the container runs.
    pub follow: bool,
    /// `previous`: the logs of the container's previous instance.
    pub previous: bool,
    /// `timestamps`: each line prefixed with its time.
    pub timestamps: bool,
    /// `sinceSeconds`: only lines this recent.
    pub since_seconds: Option<i64>,
    /// `sinceTime`: only lines from this time on (RFC 3339).
    pub since_time: Option<String>,
    /// `tailLines`: only this many of the last lines.
    pub tail_lines: Option<i64>,
    /// `limitBytes`: at most this many bytes.
    pub limit_bytes: Option<i64>,
    /// `stream`: `Stdout`, `Stderr` or `All`, which kube serves only with the alpha gate `PodLogsQuerySplitStreams`
    /// (off by default, and here).
    pub stream: Option<String>,
}

impl LogOptions {
    /// The options of a query.
    ///
    /// # Errors
    /// 400 when a number or time does not parse.
    pub fn from_query(query: &[(String, String)]) -> ApiResult<Self> {
        Ok(Self {
            container: first(query, "container").map(str::to_string),
            follow: flag(query, "follow"),
            previous: flag(query, "previous"),
            timestamps: flag(query, "timestamps"),
            since_seconds: integer(query, "sinceSeconds")?,
            since_time: time(query, "sinceTime")?,
            tail_lines: integer(query, "tailLines")?,
            limit_bytes: integer(query, "limitBytes")?,
            stream: first(query, "stream").map(str::to_string),
        })
    }

    /// kube's `ValidatePodLogOptions` (split streams off) for the logs of pod `name`.
    ///
    /// # Errors
    /// `422 PodLogOptions "<name>" is invalid` with every failed rule.
    pub fn validate(&self, name: &str) -> ApiResult<()> {
        let mut errors = Vec::new();
        if let Some(tail) = self.tail_lines.filter(|t| *t < 0) {
            errors.push(FieldError::invalid(
                "tailLines",
                tail,
                "must be greater than or equal to 0",
            ));
        }
        if let Some(limit) = self.limit_bytes.filter(|l| *l < 1) {
            errors.push(FieldError::invalid(
                "limitBytes",
                limit,
                "must be greater than 0",
            ));
        }
        match (self.since_seconds, &self.since_time) {
            (Some(_), Some(_)) => errors.push(FieldError::forbidden(
                "",
                "at most one of `sinceTime` or `sinceSeconds` may be specified",
            )),
            (Some(since), None) if since < 1 => errors.push(FieldError::invalid(
                "sinceSeconds",
                since,
                "must be greater than 0",
            )),
            _ => {}
        }
        if self.stream.is_some() {
            errors.push(FieldError::forbidden("stream", "may not be specified"));
        }
        if errors.is_empty() {
            return Ok(());
        }
        Err(ApiError::from(invalid_status(
            "PodLogOptions",
            "",
            name,
            &errors,
        )))
    }

    /// The query the kubelet is sent (what kube-apiserver's `LogLocation` passes on).
    pub(crate) fn kubelet_query(&self) -> Vec<(String, String)> {
        let mut query = Vec::new();
        let mut add = |key: &str, value: String| query.push((key.to_string(), value));
        for (key, on) in [
            ("follow", self.follow),
            ("previous", self.previous),
            ("timestamps", self.timestamps),
        ] {
            if on {
                add(key, "true".to_string());
            }
        }
        if let Some(since) = self.since_seconds {
            add("sinceSeconds", since.to_string());
        }
        if let Some(since) = &self.since_time {
            add("sinceTime", since.clone());
        }
        if let Some(tail) = self.tail_lines {
            add("tailLines", tail.to_string());
        }
        if let Some(limit) = self.limit_bytes {
            add("limitBytes", limit.to_string());
        }
        query
    }
}

/// `PodExecOptions`: what `pods/exec` is asked to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecOptions {
    /// `container`: the container, or none to take the pod's only one.
    pub container: Option<String>,
    /// `command`: the command and its arguments, one parameter each.
    pub command: Vec<String>,
    /// `stdin`: the caller sends standard input.
    pub stdin: bool,
    /// `stdout`: the caller wants standard output.
    pub stdout: bool,
    /// `stderr`: the caller wants standard error.
    pub stderr: bool,
    /// `tty`: the command runs in a terminal.
    pub tty: bool,
}

impl ExecOptions {
    /// The options of a query (none of them can fail to parse).
    pub fn from_query(query: &[(String, String)]) -> Self {
        Self {
            container: first(query, "container").map(str::to_string),
            command: query
                .iter()
                .filter(|(k, _)| k == "command")
                .map(|(_, v)| v.clone())
                .collect(),
            stdin: flag(query, "stdin"),
            stdout: flag(query, "stdout"),
            stderr: flag(query, "stderr"),
            tty: flag(query, "tty"),
        }
    }

    /// The query the kubelet is sent: the streams as `1`, then the command (kube-apiserver's `streamParams`).
    pub(crate) fn kubelet_query(&self) -> Vec<(String, String)> {
        let mut query: Vec<(String, String)> = [
            ("stdin", self.stdin),
            ("stdout", self.stdout),
            ("stderr", self.stderr),
            ("tty", self.tty),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(key, _)| (key.to_string(), "1".to_string()))
        .collect();
        query.extend(
            self.command
                .iter()
                .map(|c| ("command".to_string(), c.clone())),
        );
        query
    }
}
