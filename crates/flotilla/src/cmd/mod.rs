//! One module per subcommand, each with `pub struct Args` (clap) and
//! `pub async fn run(args: Args) -> anyhow::Result<()>`.
//!
//! To add a subcommand, write `src/cmd/<name>.rs` with those two items and add one line to the list below.

/// Declares the subcommand modules, the [`Command`] enum with one variant per module, and its dispatch.
macro_rules! subcommands {
    ($($(#[$doc:meta])* $variant:ident => $module:ident,)*) => {
        $(pub mod $module;)*

        /// A subcommand and its arguments.
        // Parsed once per process: the size of its largest variant costs nothing worth a Box.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, clap::Subcommand)]
        pub enum Command {
            $($(#[$doc])* $variant($module::Args),)*
        }

        impl Command {
            /// Runs the subcommand to completion.
            ///
            /// # Errors
            /// Whatever the subcommand failed with.
            pub async fn run(self) -> anyhow::Result<()> {
                match self {
                    $(Command::$variant(args) => $module::run(args).await,)*
                }
            }
        }
    };
}

pub mod aggregated_apiserver;
pub mod karmada_webhook;
pub mod kube_access;
pub(crate) mod serving;

subcommands! {
    /// Start the whole embedded environment: control plane, member clusters (member3 in Pull mode with its agent),
    /// simulators and controllers.
    Up => up,
    /// Measure propagation of many templates over the embedded environment (docs/BENCHMARKS.md).
    Bench => bench,
    /// Print every CRD Flotilla needs as one YAML stream (the content of manifests/crds/).
    Crds => crds,
    /// Just the embedded Kubernetes-compatible API server.
    Apiserver => apiserver,
    /// All controllers and the scheduler, against any API server that holds Karmada's CRDs.
    ControllerManager => controller_manager,
    /// Register a member cluster (Push mode), as karmadactl join does.
    Join => join,
    /// Remove a member cluster, as karmadactl unjoin does.
    Unjoin => unjoin,
    /// Register a member cluster in Pull mode, as karmadactl register does; `flotilla agent` serves it.
    Register => register,
    /// Remove a Pull-mode member cluster, as karmadactl unregister does.
    Unregister => unregister,
    /// Serve one Pull-mode member cluster, as karmada-agent does.
    Agent => agent,
    /// Run interpreter rules locally (compatible with karmadactl interpret).
    Interpret => interpret,
    /// Serve the example interpreter webhook for the Workload CRD on /interpreter-workload.
    WebhookExample => webhook_example,
    /// Take a member of a running `flotilla up` away (`stop NAME`: its API server refuses connections, nothing
    /// is deleted) and bring it back (`start NAME`), to try failover.
    Member => member,
    /// Run the member workload simulator alone against any cluster (what `up` runs per member).
    Simulate => simulate,
    /// What the control plane did with each template: policy, scheduling, Works and member health, aggregated
    /// status, and the interpreter layer that answered each operation.
    ///
    /// Read from the status page of the `flotilla up` running with `--data-dir` (the default), or of a controller
    /// manager with `--url`; with `--kubeconfig` or `--context`, computed from that control plane's API instead,
    /// without the interpreter layers (only the controller manager's process records them).
    Status => status,
}
