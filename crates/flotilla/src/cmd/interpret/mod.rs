//! `flotilla interpret`: runs interpreter rules locally, compatible with `karmadactl interpret` (its flags, inputs
//! and output), except that a failed operation exits non-zero (karmadactl exits 0).
//!
//! Which layers answer: with `-f` only the customizations in those files (karmadactl's behaviour); without
//! `-f` the bundled layers (third-party and native); with `--kubeconfig` every layer registered in that
//! control plane (its customizations unless `-f` replaces them, its webhooks, the bundled layers).

mod check;
mod input;
mod output;

use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_api::config::v1alpha1::InterpreterOperation as Op;
use flotilla_interpreter::facade::error_text;
use flotilla_interpreter::{Error, Input, Request, ResourceInterpreter};

/// How long `--kubeconfig` waits for the control plane's configuration to list.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Arguments of `flotilla interpret`.
#[derive(Debug, Clone, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// `test DIR`: run the testdata cases beside customizations instead.
    #[command(subcommand)]
    pub command: Option<Subcommand>,
    /// Files, directories or `-` with ResourceInterpreterCustomizations (YAML or JSON, multi-document).
    #[arg(short = 'f', long = "filename")]
    pub filenames: Vec<String>,
    /// Recurse into directories given with -f.
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// Validate every customization and compile its scripts instead of executing an operation.
    #[arg(long)]
    pub check: bool,
    /// The operation to execute (case-insensitive): retain, interpretReplica, interpretComponent,
    /// reviseReplica, interpretStatus, aggregateStatus, interpretHealth, interpretDependency.
    #[arg(long)]
    pub operation: Option<String>,
    /// File with the one object used as the desired object.
    #[arg(long)]
    pub desired_file: Option<String>,
    /// File with the one object used as the observed (member) object.
    #[arg(long)]
    pub observed_file: Option<String>,
    /// File (or `-`) with a stream of AggregatedStatusItem documents for aggregateStatus.
    #[arg(long)]
    pub status_file: Option<String>,
    /// The replica count for reviseReplica.
    #[arg(long, default_value_t = 0)]
    pub desired_replica: i32,
    /// Before the results, say which layer answered and why the others did not.
    #[arg(long)]
    pub explain: bool,
    /// Resolve through every layer registered in the control plane this kubeconfig reaches.
    #[arg(long)]
    pub kubeconfig: Option<std::path::PathBuf>,
    /// The kubeconfig context of the control plane.
    #[arg(long)]
    pub karmada_context: Option<String>,
}

/// Subcommands of `flotilla interpret`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Subcommand {
    /// Run the test cases (Karmada's third-party testdata format) of every `customizations.yaml` with a
    /// `testdata/` directory beside it under DIR; exits non-zero if any case fails.
    Test {
        /// One kind's directory, or a tree of them.
        dir: std::path::PathBuf,
    },
}

/// Runs the check, the test cases or the operation.
pub async fn run(args: Args) -> anyhow::Result<()> {
    if let Some(Subcommand::Test { dir }) = &args.command {
        return test(dir).await;
    }
    if args.check {
        let documents = input::documents(&args.filenames, args.recursive)?;
        if documents.is_empty() {
            bail!("no customization given: use -f FILE");
        }
        let (report, failed) = check::check(&documents);
        print!("{report}");
        if failed {
            bail!("some customizations failed the check");
        }
        return Ok(());
    }
    let operation = parse_operation(args.operation.as_deref())?;
    let input = input(&args, &operation)?;
    let interpreter = interpreter(&args).await?;
    let (result, explanation) = interpreter.interpret_input(input).await;
    let mut stdout = String::new();
    if args.explain {
        stdout.push_str(&output::explain(&explanation));
    }
    let response = match result {
        Ok(response) => response,
        Err(Error::NotFound { .. } | Error::NotEnabled { .. }) => {
            print!("{stdout}");
            bail!("rule is not enabled for {operation}");
        }
        Err(error) => {
            print!("{stdout}");
            bail!("failed to execute {operation}: {}", error_text(&error));
        }
    };
    // The testdata runner compares exactly these names, so one function names them for both.
    let results = flotilla_interpreter::testdata::produced(&operation, response)?;
    stdout.push_str(&output::render(&results)?);
    print!("{stdout}");
    Ok(())
}

/// Karmada's case-insensitive operation names.
fn parse_operation(name: Option<&str>) -> anyhow::Result<Op> {
    let Some(name) = name else {
        bail!("operation is not set for executing")
    };
    Op::DISPATCHED
        .into_iter()
        .find(|op| op.as_str().eq_ignore_ascii_case(name))
        .with_context(|| {
            let names: Vec<&str> = Op::DISPATCHED.iter().map(|op| op.as_str()).collect();
            format!(
                "operation {name} is not supported. Use one of: {}",
                names.join(", ")
            )
        })
}

/// The request from the object files, with karmadactl's rules on which files each operation needs.
fn input(args: &Args, operation: &Op) -> anyhow::Result<Input> {
    let desired = args
        .desired_file
        .as_deref()
        .map(input::single_object)
        .transpose()
        .context("--desired-file")?;
    let observed = args
        .observed_file
        .as_deref()
        .map(input::single_object)
        .transpose()
        .context("--observed-file")?;
    if *operation == Op::Retain {
        let desired = desired.context("desired, desired-file options are not set")?;
        let observed = observed.context("observed, observed-file options are not set")?;
        return Ok(Request::Retain { desired, observed }.into());
    }
    let object = match (desired, observed) {
        (Some(object), None) | (None, Some(object)) => object,
        (None, None) => bail!("desired-file, observed-file options are not set"),
        (Some(_), Some(_)) => {
            bail!("you can not specify both desired-file and observed-file options")
        }
    };
    Ok(match operation {
        // A status file without items gives the script an empty list, no status file gives it nil, as in
        // karmadactl.
        Op::AggregateStatus => {
            let items = args
                .status_file
                .as_deref()
                .map(input::status_items)
                .transpose()?;
            return Ok(Input::aggregate_status(object, items));
        }
        Op::InterpretReplica => Request::InterpretReplica { object },
        Op::InterpretComponent => Request::InterpretComponent { object },
        Op::ReviseReplica => Request::ReviseReplica {
            object,
            replicas: i64::from(args.desired_replica),
        },
        Op::InterpretStatus => Request::InterpretStatus { object },
        Op::InterpretHealth => Request::InterpretHealth { object },
        Op::InterpretDependency => Request::InterpretDependency { object },
        Op::Retain | Op::Prune | Op::All | Op::Other(_) => {
            bail!("operation {operation} cannot be executed")
        }
    }
    .into())
}

/// The interpreter with the layers the flags ask for, ready.
async fn interpreter(args: &Args) -> anyhow::Result<ResourceInterpreter> {
    if !args.filenames.is_empty() {
        if args.kubeconfig.is_some() {
            bail!(
                "-f runs only the given customizations; --kubeconfig resolves through the control plane's: use one"
            );
        }
        let customizations = input::customizations(&args.filenames, args.recursive)?;
        return flotilla_interpreter::config::customizations_only(&customizations)
            .build()
            .context("failed to assemble the interpreter");
    }
    let Some(kubeconfig) = &args.kubeconfig else {
        return flotilla_interpreter::config::bundled()
            .build()
            .context("failed to assemble the interpreter");
    };
    let client = client(kubeconfig, args.karmada_context.as_deref()).await?;
    let (interpreter, sync) = flotilla_interpreter::config::control_plane(client)
        .context("failed to assemble the interpreter")?;
    tokio::spawn(sync);
    tokio::time::timeout(READY_TIMEOUT, interpreter.ready())
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "timed out after {}s waiting for the interpreter configuration of {}",
                READY_TIMEOUT.as_secs(),
                kubeconfig.display(),
            )
        })?;
    Ok(interpreter)
}

/// A client for the control plane of `kubeconfig`.
async fn client(
    kubeconfig: &std::path::Path,
    context: Option<&str>,
) -> anyhow::Result<kube::Client> {
    let file = kube::config::Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("failed to read kubeconfig {}", kubeconfig.display()))?;
    let options = kube::config::KubeConfigOptions {
        context: context.map(str::to_owned),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(file, &options)
        .await
        .with_context(|| format!("failed to load kubeconfig {}", kubeconfig.display()))?;
    kube::Client::try_from(config).context("failed to create a client for the control plane")
}

/// `flotilla interpret test DIR`: runs the cases on a blocking thread (scripts run synchronously there).
async fn test(dir: &std::path::Path) -> anyhow::Result<()> {
    let owned = dir.to_owned();
    let report = tokio::task::spawn_blocking(move || {
        let vm =
            flotilla_interpreter::lua::LuaVm::new(flotilla_interpreter::lua::VmConfig::default());
        flotilla_interpreter::testdata::run_dir(&owned, &vm)
    })
    .await
    .context("the test runner stopped")?
    .with_context(|| format!("failed to run the test cases under {}", dir.display()))?;
    println!("{report}");
    if !report.passed() {
        bail!("test cases under {} failed", dir.display());
    }
    Ok(())
}
