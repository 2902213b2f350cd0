//! `flotilla`: a Karmada-compatible multi-cluster control plane in one binary.

fn main() -> std::process::ExitCode {
    flotilla::main()
}
