//! Which images a simulated kubelet can pull. A simulated member reaches no registry, so every image stands for
//! one that exists, except those in a repository namespace (or registry) named `fake`, such as
//! `fake/nginx:1.19.0`: the usual way to make a workload unhealthy on purpose, which on a real cluster leaves
//! its pods waiting in `ImagePullBackOff` because no such image exists. Failover scenarios rely on it.

use serde_json::Value;

/// The namespace whose images never pull.
const MISSING: &str = "fake";

/// Whether a kubelet could pull `image`: false for `fake/...`, `<registry>/fake/...` and `fake:<port>/...`.
pub(crate) fn pullable(image: &str) -> bool {
    let mut parts = image.split('/');
    let (Some(first), rest) = (parts.next(), parts.collect::<Vec<_>>()) else {
        return true;
    };
    if rest.is_empty() {
        // A bare name (`nginx`) is an official image.
        return true;
    }
    // As a container runtime reads a reference: a first component with a dot or a port, or `localhost`, is a
    // registry; otherwise the reference lives on the default registry and the first component is a namespace.
    let host = first.split(':').next().unwrap_or(first);
    let is_registry = first.contains('.') || first.contains(':') || first == "localhost";
    if host == MISSING {
        return false;
    }
    !(is_registry && rest.len() > 1 && rest[0] == MISSING)
}

/// The names and images of the containers in the pod spec at `spec` (`containers` and `initContainers`) whose
/// image cannot be pulled, in order.
pub(crate) fn unpullable_containers(spec: Option<&Value>) -> Vec<(&str, &str)> {
    let Some(spec) = spec else {
        return Vec::new();
    };
    ["initContainers", "containers"]
        .into_iter()
        .filter_map(|list| spec.get(list).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| {
            let image = c.get("image").and_then(Value::as_str)?;
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            (!pullable(image)).then_some((name, image))
        })
        .collect()
}

/// Whether a workload's pod template (`spec.template.spec`) names an image that cannot be pulled: its pods
/// would never become ready.
pub(crate) fn template_unpullable(obj: &Value) -> bool {
    !unpullable_containers(obj.pointer("/spec/template/spec")).is_empty()
}

#[cfg(test)]
mod tests {
    use super::pullable;

    #[test]
    fn only_images_of_the_fake_namespace_or_registry_fail_to_pull() {
        for image in [
            "nginx",
            "nginx:1.19.0",
            "library/nginx:1.19.0",
            "docker.io/library/nginx",
            "registry.k8s.io/pause:3.10",
            "localhost:5000/app",
            "fakeish/nginx",
            "docker.io/fake",
        ] {
            assert!(pullable(image), "{image} should pull");
        }
        for image in [
            "fake/nginx:1.19.0",
            "fake/library/nginx",
            "docker.io/fake/nginx",
            "fake:5000/nginx",
        ] {
            assert!(!pullable(image), "{image} should not pull");
        }
    }
}
