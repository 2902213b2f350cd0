//! `fieldValidation` (spec §7.2): what happens to fields the kind does not declare. `Ignore` drops them
//! silently, `Warn` (the default) drops them and answers with one `Warning` header each, `Strict` refuses the
//! request with 400.

use axum::response::Response;
use http::{HeaderValue, header};

use super::Req;
use crate::status::{ApiError, ApiResult};

/// The `fieldValidation` directive of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Drop unknown fields silently.
    Ignore,
    /// Drop them and warn (the default).
    #[default]
    Warn,
    /// Refuse the request.
    Strict,
}

impl Mode {
    /// The directive of a request; `options_kind` names its options in the 422 for an unknown value.
    ///
    /// # Errors
    /// 422 on `<options_kind>` for a value other than `Ignore`, `Warn` or `Strict`.
    pub fn of(req: &Req, options_kind: &str) -> ApiResult<Self> {
        match req.query.get("fieldValidation").unwrap_or("") {
            "" | "Warn" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            "Strict" => Ok(Self::Strict),
            other => Err(ApiError::invalid_field(
                options_kind,
                "meta.k8s.io",
                "",
                "FieldValueNotSupported",
                "fieldValidation",
                &format!(
                    "Unsupported value: \"{other}\": supported values: \"Ignore\", \"Strict\", \"Warn\""
                ),
            )),
        }
    }
}

/// What one write learned about unknown fields.
#[derive(Debug, Default)]
pub struct Findings {
    mode: Mode,
    warnings: Vec<String>,
}

impl Findings {
    /// Findings collected under `mode`.
    pub fn new(mode: Mode) -> Self {
        Self {
            mode,
            warnings: Vec::new(),
        }
    }

    /// Applies the directive to the unknown field paths of one decoded object.
    ///
    /// # Errors
    /// 400 `strict decoding error: unknown field "<path>", ...` under `Strict`.
    pub fn unknown(&mut self, paths: Vec<String>) -> ApiResult<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let quoted: Vec<String> = paths
            .iter()
            .map(|p| format!("unknown field \"{p}\""))
            .collect();
        match self.mode {
            Mode::Ignore => Ok(()),
            Mode::Warn => {
                self.warnings.extend(quoted);
                Ok(())
            }
            Mode::Strict => Err(ApiError::bad_request(format!(
                "strict decoding error: {}",
                quoted.join(", ")
            ))),
        }
    }

    /// Adds one `Warning: 299 - "<text>"` header per warning to a response.
    pub fn annotate(&self, mut response: Response) -> Response {
        for w in &self.warnings {
            let text = format!("299 - \"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""));
            if let Ok(v) = HeaderValue::from_str(&text) {
                response.headers_mut().append(header::WARNING, v);
            }
        }
        response
    }
}
