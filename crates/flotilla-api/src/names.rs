//! Every well-known label, annotation and finalizer key (controllers spec §1.8), spelled once.
//!
//! No other crate spells these strings: they import them from here.
