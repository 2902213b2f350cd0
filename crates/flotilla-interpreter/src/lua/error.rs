//! The error every Lua evaluation fails with: which script, which function, and what Lua said.

use std::fmt;

/// What went wrong in a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptErrorKind {
    /// The script does not compile.
    Compile,
    /// The script raised an error while running (including refused library functions).
    Runtime,
    /// The call ran past its CPU deadline.
    Deadline,
    /// The call allocated more than its memory limit.
    Memory,
    /// The script does not define the operation's function, or defines something else under its name.
    MissingFunction,
    /// The function returned a value of the wrong type or shape for the operation.
    Result,
}

impl fmt::Display for ScriptErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScriptErrorKind::Compile => "compile error",
            ScriptErrorKind::Runtime => "runtime error",
            ScriptErrorKind::Deadline => "deadline exceeded",
            ScriptErrorKind::Memory => "memory limit exceeded",
            ScriptErrorKind::MissingFunction => "missing function",
            ScriptErrorKind::Result => "invalid result",
        })
    }
}

/// A Lua script failed; names the script (customization), the Lua function and Lua's message.
///
/// The interpreter layers wrap it in [`crate::Error::Layer`], which adds the operation and the object.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("failed to run {function} of {script}: {message}")]
pub struct ScriptError {
    /// The script's name: the customization it came from (e.g. `declarative-configuration-example`).
    pub script: String,
    /// The Lua function called (e.g. `GetReplicas`).
    pub function: &'static str,
    /// The class of failure.
    pub kind: ScriptErrorKind,
    /// Lua's message, without a stack traceback.
    pub message: String,
}

impl ScriptError {
    /// A new error.
    pub fn new(
        script: &str,
        function: &'static str,
        kind: ScriptErrorKind,
        message: impl Into<String>,
    ) -> Self {
        ScriptError {
            script: script.to_owned(),
            function,
            kind,
            message: message.into(),
        }
    }
}

/// The text of an mlua error as a script author wants to read it: the innermost cause, without tracebacks.
pub(crate) fn lua_message(error: &mlua::Error) -> String {
    let text = match error {
        mlua::Error::CallbackError { cause, .. } => return lua_message(cause),
        mlua::Error::WithContext { cause, .. } => return lua_message(cause),
        mlua::Error::RuntimeError(message) => message.clone(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::MemoryError(message) => message.clone(),
        mlua::Error::ExternalError(inner) => inner.to_string(),
        other => other.to_string(),
    };
    match text.find("\nstack traceback:") {
        Some(at) => text[..at].trim_end().to_owned(),
        None => text.trim_end().to_owned(),
    }
}
