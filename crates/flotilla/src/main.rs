//! `flotilla`: a Karmada-compatible multi-cluster control plane in one binary.

// Every request, watch event and informer update allocates and frees many small `serde_json` nodes across the
// runtime's threads; glibc's allocator spent about a quarter of `flotilla bench`'s CPU on them, mimalloc a
// third as much (docs/BENCHMARKS.md, propagation end to end).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    flotilla::main()
}
