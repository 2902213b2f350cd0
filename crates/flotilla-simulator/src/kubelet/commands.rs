//! What a simulated container can run: a few commands every container image has, answered from the pod's spec, and
//! nothing else ([`COMMANDS`]). A command is found by its name, or by its path in one of the usual `bin`
//! directories (`/bin/echo`). Anything else is answered as a container runtime (containerd with runc) answers an
//! executable the image does not have: the exec fails to start, an internal error naming the executable.
//!
//! Nothing runs on the machine: every answer is computed here.

use k8s_openapi::api::core::v1::{Container, Pod};

/// Every command a simulated container answers, and what it does.
pub(crate) const COMMANDS: [(&str, &str); 6] = [
    (
        "echo",
        "writes its arguments, separated by spaces, and a newline (none with `-n`)",
    ),
    ("true", "exits 0"),
    ("false", "exits 1"),
    (
        "hostname",
        "writes the pod's host name: `spec.hostname`, else the pod's name",
    ),
    (
        "env",
        "writes the environment: `PATH`, `HOSTNAME`, the container's `env` entries that have a `value`, `HOME`",
    ),
    (
        "cat",
        "copies standard input to standard output until the client closes it",
    ),
];

/// Where the usual images keep their commands.
const BIN_DIRS: [&str; 6] = [
    "/bin",
    "/usr/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// What the image's `PATH` is taken to be (the usual Linux image's).
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What of the pod a command sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Context {
    /// The container's host name.
    pub hostname: String,
    /// The container's environment, in order.
    pub env: Vec<(String, String)>,
}

impl Context {
    /// The context of `container` in `pod`.
    pub(crate) fn of(pod: &Pod, container: &Container) -> Self {
        let spec_hostname = pod
            .spec
            .as_ref()
            .and_then(|s| s.hostname.clone())
            .filter(|h| !h.is_empty());
        let hostname = spec_hostname
            .or_else(|| pod.metadata.name.clone())
            .unwrap_or_default();
        let own: Vec<(String, String)> = container
            .env
            .iter()
            .flatten()
            .filter_map(|e| Some((e.name.clone(), e.value.clone()?)))
            .collect();
        let defined = |name: &str| own.iter().any(|(n, _)| n == name);
        let mut env = Vec::new();
        for (name, value) in [("PATH", PATH), ("HOSTNAME", hostname.as_str())] {
            if !defined(name) {
                env.push((name.to_string(), value.to_string()));
            }
        }
        env.extend(own.iter().cloned());
        if !defined("HOME") {
            env.push(("HOME".to_string(), "/root".to_string()));
        }
        Self { hostname, env }
    }
}

/// What running a command comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Run {
    /// It wrote this and exited with this code.
    Done {
        /// Its standard output.
        stdout: Vec<u8>,
        /// Its standard error.
        stderr: Vec<u8>,
        /// Its exit code.
        code: i32,
    },
    /// `cat`: standard input goes to standard output until it closes, then it exits 0.
    Cat,
    /// The image has no such executable: the container runtime's error.
    Missing(String),
}

fn done(stdout: impl Into<Vec<u8>>, code: i32) -> Run {
    Run::Done {
        stdout: stdout.into(),
        stderr: Vec::new(),
        code,
    }
}

fn failed(name: &str, why: &str) -> Run {
    Run::Done {
        stdout: Vec::new(),
        stderr: format!("{name}: {why}\n").into_bytes(),
        code: 1,
    }
}

/// The command's name, when `argv0` names one of the usual `bin` directories' or no directory at all.
fn command_name(argv0: &str) -> Option<&str> {
    match argv0.rsplit_once('/') {
        None => Some(argv0),
        Some((dir, name)) if BIN_DIRS.contains(&dir) => Some(name),
        Some(_) => None,
    }
}

/// Runs `argv` in a container with `context`; `exec_id` names the exec in a runtime's error.
pub(crate) fn run(argv: &[String], context: &Context, exec_id: &str) -> Run {
    let argv0 = argv.first().map(String::as_str).unwrap_or_default();
    let args = argv.get(1..).unwrap_or_default();
    let known = command_name(argv0).filter(|name| COMMANDS.iter().any(|(c, _)| c == name));
    let Some(name) = known else {
        let why = if argv0.contains('/') {
            format!("stat {argv0}: no such file or directory")
        } else {
            "executable file not found in $PATH".to_string()
        };
        return Run::Missing(format!(
            "failed to exec in container: failed to start exec \"{exec_id}\": OCI runtime exec failed: exec failed: unable to start container process: exec: \"{argv0}\": {why}: unknown"
        ));
    };
    match name {
        "echo" => echo(args),
        "true" => done(Vec::new(), 0),
        "false" => done(Vec::new(), 1),
        "hostname" if args.is_empty() => done(format!("{}\n", context.hostname), 0),
        "hostname" => failed(
            "hostname",
            "a simulated container's hostname takes no options",
        ),
        "env" if args.is_empty() => done(
            context
                .env
                .iter()
                .map(|(k, v)| format!("{k}={v}\n"))
                .collect::<String>(),
            0,
        ),
        "env" => failed("env", "a simulated container's env runs no other command"),
        "cat" => match args.iter().find(|a| a.as_str() != "-") {
            None => Run::Cat,
            Some(file) => failed(
                "cat",
                &format!("can't open '{file}': No such file or directory"),
            ),
        },
        _ => done(Vec::new(), 0),
    }
}

/// `echo`: leading `-n`, `-e` and `-E` options as busybox and coreutils take them.
fn echo(args: &[String]) -> Run {
    let mut newline = true;
    let mut words = args;
    while let Some((first, rest)) = words.split_first() {
        let flags = first
            .strip_prefix('-')
            .filter(|f| !f.is_empty() && f.chars().all(|c| matches!(c, 'n' | 'e' | 'E')));
        let Some(flags) = flags else {
            break;
        };
        if flags.contains('n') {
            newline = false;
        }
        words = rest;
    }
    let mut out = words.join(" ");
    if newline {
        out.push('\n');
    }
    done(out, 0)
}
