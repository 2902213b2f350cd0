//! `fieldValidation`: what happens to fields the kind does not declare. `Ignore` drops them
//! silently, `Warn` (the default) drops them and answers with one `Warning` header each, `Strict` refuses the
//! request with 400. The request side (parsing the directive, writing the headers) is the server's handlers'.

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

/// What one write learned about unknown fields.
#[derive(Debug, Default)]
pub struct Findings {
    mode: Mode,
    warnings: Vec<String>,
}

impl Findings {
    /// Findings collected under `mode`.
    pub(crate) fn new(mode: Mode) -> Self {
        Self {
            mode,
            warnings: Vec::new(),
        }
    }

    /// Applies the directive to the unknown field paths of one decoded object.
    ///
    /// # Errors
    /// 400 `strict decoding error: unknown field "<path>", ...` under `Strict`.
    pub(crate) fn unknown(&mut self, paths: Vec<String>) -> ApiResult<()> {
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

    /// The warnings, one per unknown field.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Forgets the warnings of an earlier attempt at the same write, which is about to be prepared again.
    pub(crate) fn restart(&mut self) {
        self.warnings.clear();
    }
}
