//! End-to-end tests: they take `KARMADA_KUBECONFIG` and `MEMBERS_KUBECONFIG`, or start `flotilla up` themselves.
