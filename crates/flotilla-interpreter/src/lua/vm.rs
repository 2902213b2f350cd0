//! The Lua VM a layer owns: compiled scripts cached by content, a pool of sandboxed states, and bounded
//! concurrency off the async threads (kubewarden's pattern: a semaphore, then `spawn_blocking`).
//!
//! Guarantees: a script is compiled once per distinct text and loaded once per state; at most `concurrency` calls
//! run at the same time; every call has the CPU deadline and memory limit of [`Limits`]; a state is reused only
//! after its call finished (whatever the outcome), and nothing a call defines is visible to the next.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::call;
use super::error::{ScriptError, ScriptErrorKind, lua_message};
use super::sandbox::Sandbox;
use crate::layer::Input;
use crate::layer::Response;

/// The budget of one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// CPU deadline: Karmada's 1 second.
    pub timeout: Duration,
    /// Bytes a call may allocate on top of what its state holds.
    pub memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(1),
            memory: 64 * 1024 * 1024,
        }
    }
}

/// How a [`LuaVm`] runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmConfig {
    /// Per-call budget.
    pub limits: Limits,
    /// Idle states kept for reuse (Karmada keeps 10 per layer).
    pub pool_size: usize,
    /// Calls running at once; further calls wait.
    pub concurrency: usize,
}

impl Default for VmConfig {
    fn default() -> Self {
        let cores = std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(2);
        VmConfig {
            limits: Limits::default(),
            pool_size: 10,
            concurrency: cores,
        }
    }
}

/// Compiled bytecode shared by every script with the same text.
#[derive(Debug)]
struct Compiled {
    id: u64,
    bytecode: Result<Vec<u8>, String>,
}

/// A script ready to run: its name (for errors) and its compiled form.
#[derive(Clone, Debug)]
pub struct Script {
    name: Arc<str>,
    compiled: Arc<Compiled>,
}

impl Script {
    /// The name errors use: the customization the script came from.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn id(&self) -> u64 {
        self.compiled.id
    }

    /// The bytecode, or the compiler's message when the script does not compile.
    pub(crate) fn bytecode(&self) -> Result<&[u8], String> {
        self.compiled.bytecode.as_deref().map_err(Clone::clone)
    }

    /// The compiler's message, when the script does not compile.
    pub fn compile_error(&self) -> Option<&str> {
        self.compiled.bytecode.as_ref().err().map(String::as_str)
    }
}

struct Inner {
    config: VmConfig,
    idle: Mutex<Vec<Sandbox>>,
    permits: Semaphore,
    compiled: Mutex<HashMap<Arc<str>, Weak<Compiled>>>,
    next_id: AtomicU64,
}

/// A pool of sandboxed Lua states with a compile cache; cheap to clone (shared).
#[derive(Clone)]
pub struct LuaVm {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LuaVm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LuaVm")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Default for LuaVm {
    fn default() -> Self {
        LuaVm::new(VmConfig::default())
    }
}

impl LuaVm {
    /// A VM with no states yet; states are created on demand.
    pub fn new(config: VmConfig) -> Self {
        let concurrency = config.concurrency.max(1);
        LuaVm {
            inner: Arc::new(Inner {
                config,
                idle: Mutex::new(Vec::new()),
                permits: Semaphore::new(concurrency),
                compiled: Mutex::new(HashMap::new()),
                next_id: AtomicU64::new(1),
            }),
        }
    }

    /// The per-call budget.
    pub fn limits(&self) -> &Limits {
        &self.inner.config.limits
    }

    /// Compiles `source` (or reuses the bytecode of an identical text). A script that does not compile is still
    /// returned: running it fails with the compiler's message, as Karmada fails at call time.
    pub fn script(&self, name: &str, source: &str) -> Script {
        let mut cache = self
            .inner
            .compiled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(compiled) = cache.get(source).and_then(Weak::upgrade) {
            return Script {
                name: name.into(),
                compiled,
            };
        }
        cache.retain(|_, weak| weak.strong_count() > 0);
        let compiled = Arc::new(Compiled {
            id: self.inner.next_id.fetch_add(1, Ordering::Relaxed),
            bytecode: compile(source),
        });
        cache.insert(source.into(), Arc::downgrade(&compiled));
        Script {
            name: name.into(),
            compiled,
        }
    }

    /// Runs one call on the current thread (for callers already off the async threads: the CLI, the testdata
    /// runner, benchmarks). Does not take a concurrency permit.
    ///
    /// # Errors
    /// See [`ScriptError`].
    pub fn call_blocking(
        &self,
        script: &Script,
        input: impl Into<Input>,
    ) -> Result<Response, ScriptError> {
        let input = input.into();
        let function = call::function_name(&input.operation());
        match self.with_sandbox(|sandbox, limits| call::run(sandbox, script, input, limits)) {
            Ok(result) => result,
            Err(e) => Err(ScriptError::new(
                script.name(),
                function,
                ScriptErrorKind::Runtime,
                e.0,
            )),
        }
    }

    /// Runs `f` with a pooled state on the current thread.
    pub(crate) fn with_sandbox<R>(
        &self,
        f: impl FnOnce(&mut Sandbox, &Limits) -> R,
    ) -> Result<R, StateError> {
        let pooled = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let mut sandbox = match pooled {
            Some(sandbox) => sandbox,
            None => Sandbox::new().map_err(|e| {
                StateError(format!("failed to create a Lua state: {}", lua_message(&e)))
            })?,
        };
        let out = f(&mut sandbox, &self.inner.config.limits);
        let mut idle = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if idle.len() < self.inner.config.pool_size {
            idle.push(sandbox);
        }
        Ok(out)
    }

    /// Runs `f` with a pooled state on a blocking thread, after taking one of the VM's concurrency permits.
    pub(crate) async fn run<R, F>(&self, f: F) -> Result<R, StateError>
    where
        F: FnOnce(&mut Sandbox, &Limits) -> R + Send + 'static,
        R: Send + 'static,
    {
        let _permit = self
            .inner
            .permits
            .acquire()
            .await
            .map_err(|_| StateError("lua VM is shut down".to_owned()))?;
        let vm = self.clone();
        tokio::task::spawn_blocking(move || vm.with_sandbox(f))
            .await
            .map_err(|e| StateError(format!("lua evaluation task failed: {e}")))?
    }
}

/// A Lua state could not be provided.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StateError(pub String);

/// Compiles a chunk with Luau, keeping line information for error messages.
pub(crate) fn compile(source: &str) -> Result<Vec<u8>, String> {
    mlua::chunk::Compiler::new()
        .set_optimization_level(1)
        .set_debug_level(1)
        .compile(source)
        .map_err(|e| lua_message(&e))
}
