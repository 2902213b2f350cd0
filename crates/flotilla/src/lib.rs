//! The `flotilla` binary's composition root: command-line arguments and the subcommands that assemble the
//! library crates.
