//! What the create and update strategies of the workload kinds write beyond defaulting, as kube-apiserver
//! v1.37's do (`pkg/registry/batch/job` and `apps/daemonset`): a Job's generated selector and pod labels, a
//! DaemonSet's template generation, a CronJob's template metadata.

use serde_json::{Value, json};

use crate::defaults::{TEMPLATE_GENERATION, child};

/// The pod template labels a generated Job selector rests on: the Job's name under both keys...
const JOB_NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
/// ... and its uid under both keys; the selector names only the second.
const CONTROLLER_UID_LABELS: [&str; 2] = ["controller-uid", "batch.kubernetes.io/controller-uid"];

/// A new Job, once it has its uid: unless `spec.manualSelector` is true, its pod template is labelled with the
/// Job's name and uid (labels the writer set are kept, validation would judge them) and its selector selects
/// the uid.
///
/// `sent_without_labels` is whether the writer's Job had no labels. Upstream's defaulting then hands the Job
/// its template's label map itself, so the labels added here show on the Job too (and a Job whose template had
/// no labels gets them when it is read back, defaulted again); a Job with labels of its own keeps them.
pub(crate) fn generate_job_selector(job: &mut Value, sent_without_labels: bool) {
    if job.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let name = crate::meta::meta_str(job, "name")
        .unwrap_or_default()
        .to_string();
    let uid = crate::meta::meta_str(job, "uid")
        .unwrap_or_default()
        .to_string();
    let Some(template_labels) = child(job, &["spec", "template", "metadata", "labels"]) else {
        return;
    };
    for key in JOB_NAME_LABELS {
        template_labels.entry(key).or_insert_with(|| json!(name));
    }
    for key in CONTROLLER_UID_LABELS {
        template_labels.entry(key).or_insert_with(|| json!(uid));
    }
    let labels = template_labels.clone();
    if let Some(selector) = child(job, &["spec", "selector", "matchLabels"]) {
        selector
            .entry(CONTROLLER_UID_LABELS[1])
            .or_insert_with(|| json!(uid));
    }
    if sent_without_labels && let Some(job_labels) = child(job, &["metadata", "labels"]) {
        *job_labels = labels;
    }
}

/// A CronJob as stored: Go always writes the metadata of its job template and of that template's pod template,
/// `{}` when empty. They are added after the writer's ownership is recorded, as upstream owns no empty struct
/// the writer left out.
pub(crate) fn cron_job_template_metadata(cron_job: &mut Value) {
    for template in [
        &["spec", "jobTemplate"][..],
        &["spec", "jobTemplate", "spec", "template"],
    ] {
        if object_exists(cron_job, template)
            && let Some(template) = child(cron_job, template)
        {
            template.entry("metadata").or_insert_with(|| json!({}));
        }
    }
}

fn object_exists(value: &Value, path: &[&str]) -> bool {
    path.iter()
        .try_fold(value, |at, key| at.get(*key))
        .is_some_and(Value::is_object)
}

/// The template generation a DaemonSet's writer gave, as upstream's conversion reads it: absent is `None`,
/// anything but a decimal 64-bit integer is refused in `strconv.ParseInt`'s words.
///
/// # Errors
/// The message for the 400 the write gets.
pub(crate) fn template_generation(ds: &Value) -> Result<Option<i64>, String> {
    let Some(value) = ds
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
    else {
        return Ok(None);
    };
    let text = value.as_str().unwrap_or_default();
    text.parse::<i64>().map(Some).map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!("strconv.ParseInt: parsing {}: {why}", json!(text))
    })
}

/// A new DaemonSet's template generation: the writer's when it is at least 1, else 1.
pub(crate) fn daemonset_created(ds: &mut Value) {
    let given = template_generation(ds).ok().flatten().unwrap_or(0);
    set_template_generation(ds, given.max(1));
}

/// An updated DaemonSet keeps its template generation whatever the writer sent, one more when a write of the
/// main endpoint (`spec_written`) changed the pod template.
pub(crate) fn daemonset_updated(old: &Value, new: &mut Value, spec_written: bool) {
    let kept = template_generation(old).ok().flatten().unwrap_or(0);
    let changed = spec_written && old.pointer("/spec/template") != new.pointer("/spec/template");
    set_template_generation(new, if changed { kept + 1 } else { kept });
}

fn set_template_generation(ds: &mut Value, generation: i64) {
    if let Some(annotations) = child(ds, &["metadata", "annotations"]) {
        annotations.insert(
            TEMPLATE_GENERATION.to_string(),
            json!(generation.to_string()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(labels: Value, template_labels: Value) -> Value {
        json!({"metadata": {"name": "pi", "uid": "u-1", "labels": labels},
            "spec": {"manualSelector": false, "template": {"metadata": {"labels": template_labels}}}})
    }

    #[test]
    fn a_job_gets_its_selector_and_the_labels_it_rests_on() {
        let mut sent = job(json!(null), json!(null));
        generate_job_selector(&mut sent, true);
        let generated = json!({"job-name": "pi", "batch.kubernetes.io/job-name": "pi",
            "controller-uid": "u-1", "batch.kubernetes.io/controller-uid": "u-1"});
        assert_eq!(sent["spec"]["template"]["metadata"]["labels"], generated);
        assert_eq!(
            sent["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        assert_eq!(
            sent["metadata"]["labels"], generated,
            "a Job sent without labels shares its template's"
        );

        let mut own = job(json!({"app": "x"}), json!({"app": "x", "job-name": "mine"}));
        generate_job_selector(&mut own, false);
        assert_eq!(own["metadata"]["labels"], json!({"app": "x"}));
        assert_eq!(
            own["spec"]["template"]["metadata"]["labels"]["job-name"], "mine",
            "a label the writer set is kept for validation to judge"
        );

        let mut manual = json!({"metadata": {"name": "m", "uid": "u-2"},
            "spec": {"manualSelector": true, "selector": {"matchLabels": {"app": "m"}},
                "template": {"metadata": {"labels": {"app": "m"}}}}});
        let before = manual.clone();
        generate_job_selector(&mut manual, true);
        assert_eq!(manual, before, "a manual selector is left alone");
    }

    #[test]
    fn a_daemonsets_template_generation_moves_only_with_its_template() {
        let mut ds = json!({"metadata": {"annotations": {TEMPLATE_GENERATION: "0"}},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "nginx"}]}}}});
        daemonset_created(&mut ds);
        assert_eq!(ds["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        let mut given = json!({"metadata": {"annotations": {TEMPLATE_GENERATION: "7"}}});
        daemonset_created(&mut given);
        assert_eq!(given["metadata"]["annotations"][TEMPLATE_GENERATION], "7");

        let mut relabelled = ds.clone();
        relabelled["metadata"]["annotations"][TEMPLATE_GENERATION] = json!("99");
        daemonset_updated(&ds, &mut relabelled, true);
        assert_eq!(
            relabelled["metadata"]["annotations"][TEMPLATE_GENERATION], "1",
            "the writer cannot set it"
        );
        let mut new_image = ds.clone();
        new_image["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
        let mut through_status = new_image.clone();
        daemonset_updated(&ds, &mut new_image, true);
        assert_eq!(
            new_image["metadata"]["annotations"][TEMPLATE_GENERATION],
            "2"
        );
        daemonset_updated(&ds, &mut through_status, false);
        assert_eq!(
            through_status["metadata"]["annotations"][TEMPLATE_GENERATION],
            "1"
        );
    }

    #[test]
    fn a_template_generation_that_is_no_number_is_refused_in_go_words() {
        let with = |v: &str| json!({"metadata": {"annotations": {TEMPLATE_GENERATION: v}}});
        assert_eq!(template_generation(&with("-3")), Ok(Some(-3)));
        assert_eq!(template_generation(&json!({"metadata": {}})), Ok(None));
        assert_eq!(
            template_generation(&with("abc")),
            Err(r#"strconv.ParseInt: parsing "abc": invalid syntax"#.to_string())
        );
        assert_eq!(
            template_generation(&with("99999999999999999999")),
            Err(
                r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#
                    .to_string()
            )
        );
    }

    #[test]
    fn a_cron_jobs_templates_have_metadata_once_they_exist() {
        let mut cj = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {}}}}}});
        cron_job_template_metadata(&mut cj);
        assert_eq!(
            cj,
            json!({"spec": {"jobTemplate": {"metadata": {}, "spec": {"template": {"metadata": {}, "spec": {}}}}}})
        );
        let mut bare = json!({"spec": {"schedule": "* * * * *"}});
        cron_job_template_metadata(&mut bare);
        assert_eq!(
            bare,
            json!({"spec": {"schedule": "* * * * *"}}),
            "nothing is invented"
        );
    }
}
