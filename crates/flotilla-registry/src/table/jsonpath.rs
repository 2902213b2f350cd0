//! The JSONPath subset Kubernetes printer columns use: `.a.b`, `['a.b']`, `[0]`, `[-1]`, `[*]`, `.*` and filters
//! such as `[?(@.type=="Ready")]` (`==`, `!=`, `<`, `>`, `<=`, `>=`, or bare existence), optionally wrapped in
//! `{...}`.

use serde_json::Value;

/// One step of a parsed path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    Wildcard,
    Filter {
        path: Vec<Step>,
        op: Option<(String, Value)>,
    },
}

/// A parsed JSONPath expression.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

/// A JSONPath that does not parse; the message names the offending part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSONPath {path:?}: {reason}")]
pub struct JsonPathError {
    /// The expression.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

impl JsonPath {
    /// Parses an expression such as `.status.conditions[?(@.type=="Ready")].status`.
    ///
    /// Errors: unbalanced brackets or quotes, a bad index, an unsupported filter.
    pub fn parse(expr: &str) -> Result<Self, JsonPathError> {
        let err = |reason: &str| JsonPathError {
            path: expr.to_string(),
            reason: reason.to_string(),
        };
        let mut s = expr.trim();
        if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            s = inner.trim();
        }
        let steps = parse_steps(s.strip_prefix('$').unwrap_or(s)).map_err(|r| err(&r))?;
        Ok(Self { steps })
    }

    /// Every value the path selects in `root`, in document order.
    pub fn find<'v>(&self, root: &'v Value) -> Vec<&'v Value> {
        eval(&self.steps, vec![root])
    }
}

fn parse_steps(mut s: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    while !s.is_empty() {
        if let Some(rest) = s.strip_prefix('.') {
            if let Some(rest) = rest.strip_prefix('*') {
                steps.push(Step::Wildcard);
                s = rest;
                continue;
            }
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            if end == 0 {
                return Err("empty field name".to_string());
            }
            steps.push(Step::Field(rest[..end].to_string()));
            s = &rest[end..];
        } else if let Some(rest) = s.strip_prefix('[') {
            let close = matching_bracket(rest).ok_or("unclosed '['")?;
            let inner = rest[..close].trim();
            s = &rest[close + 1..];
            steps.push(parse_bracket(inner)?);
        } else {
            // A leading bare field name (`metadata.name`) is accepted as if it started with a dot.
            let end = s.find(['.', '[']).unwrap_or(s.len());
            steps.push(Step::Field(s[..end].to_string()));
            s = &s[end..];
        }
    }
    Ok(steps)
}

/// Index of the `]` closing a bracket whose contents start at `s`, skipping quoted text and nested brackets.
fn matching_bracket(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') if depth == 0 => return Some(i),
            (None, ']') => depth -= 1,
            _ => {}
        }
    }
    None
}

fn unquote(s: &str) -> Option<String> {
    let s = s.trim();
    let q = s.chars().next()?;
    if (q == '\'' || q == '"') && s.len() >= 2 && s.ends_with(q) {
        return Some(s[1..s.len() - 1].to_string());
    }
    None
}

fn parse_bracket(inner: &str) -> Result<Step, String> {
    if inner == "*" {
        return Ok(Step::Wildcard);
    }
    if let Some(name) = unquote(inner) {
        return Ok(Step::Field(name));
    }
    if let Some(filter) = inner.strip_prefix('?') {
        let filter = filter.trim();
        let body = filter
            .strip_prefix('(')
            .and_then(|f| f.strip_suffix(')'))
            .ok_or_else(|| format!("filter {inner:?} must look like ?(...)"))?;
        return parse_filter(body.trim());
    }
    inner
        .parse::<i64>()
        .map(Step::Index)
        .map_err(|_| format!("unsupported subscript [{inner}]"))
}

fn parse_filter(body: &str) -> Result<Step, String> {
    let ops = ["==", "!=", "<=", ">=", "<", ">"];
    let found = ops
        .iter()
        .filter_map(|op| body.find(op).map(|i| (i, *op)))
        .min_by_key(|(i, op)| (*i, usize::MAX - op.len()));
    let (lhs, op) = match found {
        Some((i, op)) => {
            let rhs = body[i + op.len()..].trim();
            let value = unquote(rhs)
                .map(Value::String)
                .or_else(|| serde_json::from_str::<Value>(rhs).ok())
                .ok_or_else(|| format!("unsupported filter value {rhs:?}"))?;
            (body[..i].trim(), Some((op.to_string(), value)))
        }
        None => (body, None),
    };
    let lhs = lhs
        .strip_prefix('@')
        .ok_or_else(|| format!("filter {body:?} must test @"))?;
    Ok(Step::Filter {
        path: parse_steps(lhs)?,
        op,
    })
}

fn eval<'v>(steps: &[Step], mut current: Vec<&'v Value>) -> Vec<&'v Value> {
    for step in steps {
        let mut next = Vec::new();
        for v in current {
            match step {
                Step::Field(name) => next.extend(v.get(name.as_str())),
                Step::Index(i) => {
                    if let Value::Array(items) = v {
                        let idx = if *i < 0 { items.len() as i64 + i } else { *i };
                        next.extend(usize::try_from(idx).ok().and_then(|i| items.get(i)));
                    }
                }
                Step::Wildcard => match v {
                    Value::Array(items) => next.extend(items.iter()),
                    Value::Object(map) => {
                        // Map order is not meaningful; sorting keys keeps results stable.
                        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                        entries.sort_by(|a, b| a.0.cmp(b.0));
                        next.extend(entries.into_iter().map(|(_, v)| v));
                    }
                    _ => {}
                },
                Step::Filter { path, op } => {
                    let Value::Array(items) = v else { continue };
                    next.extend(
                        items
                            .iter()
                            .filter(|item| filter_matches(item, path, op.as_ref())),
                    );
                }
            }
        }
        current = next;
    }
    current
}

fn filter_matches(item: &Value, path: &[Step], op: Option<&(String, Value)>) -> bool {
    let found = eval(path, vec![item]);
    let Some((op, wanted)) = op else {
        return !found.is_empty();
    };
    found.iter().any(|v| {
        let ordering = match (v, wanted) {
            (Value::Number(a), Value::Number(b)) => a
                .as_f64()
                .zip(b.as_f64())
                .and_then(|(a, b)| a.partial_cmp(&b)),
            (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
            _ => None,
        };
        match op.as_str() {
            "==" => *v == wanted,
            "!=" => *v != wanted,
            "<" => ordering == Some(std::cmp::Ordering::Less),
            ">" => ordering == Some(std::cmp::Ordering::Greater),
            "<=" => matches!(
                ordering,
                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
            ),
            ">=" => matches!(
                ordering,
                Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
            ),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selects_like_kubernetes_jsonpath() {
        let obj = json!({
            "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "w"}},
            "spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}
        });
        let cases: &[(&str, Value)] = &[
            (".metadata.name", json!(["web"])),
            ("{.metadata.name}", json!(["web"])),
            ("$.spec.replicas", json!([3])),
            ("metadata.name", json!(["web"])),
            (".metadata.labels['app.kubernetes.io/name']", json!(["w"])),
            (".spec.ports[0].port", json!([80])),
            (".spec.ports[-1].port", json!([443])),
            (".spec.ports[*].port", json!([80, 443])),
            (".spec.ports[7].port", json!([])),
            (
                ".status.conditions[?(@.type==\"Ready\")].status",
                json!(["True"]),
            ),
            (
                ".status.conditions[?(@.type=='Synced')].status",
                json!(["False"]),
            ),
            (
                ".status.conditions[?(@.type!=\"Ready\")].type",
                json!(["Synced"]),
            ),
            (".spec.ports[?(@.port>100)].port", json!([443])),
            (".spec.ports[?(@.port<=80)].port", json!([80])),
            (
                ".status.conditions[?(@.status)].type",
                json!(["Ready", "Synced"]),
            ),
            (
                ".metadata.*",
                json!([{"app.kubernetes.io/name": "w"}, "web"]),
            ),
            (".missing.deeper", json!([])),
        ];
        for (expr, want) in cases {
            let path = JsonPath::parse(expr).unwrap_or_else(|e| panic!("{e}"));
            let got: Vec<Value> = path.find(&obj).into_iter().cloned().collect();
            assert_eq!(Value::Array(got), *want, "{expr}");
        }
    }

    #[test]
    fn rejects_malformed_paths() {
        for expr in [
            ".a[0",
            ".a[x]",
            ".a[?(@.b==)]",
            ".a[?@.b]",
            ".a..b",
            ".a[?(b==1)]",
        ] {
            assert!(JsonPath::parse(expr).is_err(), "{expr}");
        }
    }
}
