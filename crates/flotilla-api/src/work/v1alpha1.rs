//! `work.karmada.io/v1alpha1`: Work.
