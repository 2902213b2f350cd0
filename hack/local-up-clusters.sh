# Sourced by hack/local-up.sh in kind and kube modes (never run on its own): clusters karmada-host and member1..N,
# Flotilla's CRDs, system:admin's proxy permission (manifests/cluster-proxy-admin-rbac.yaml) and the bootstrap-token
# configuration (manifests/bootstrap-token-configuration.yaml) installed in karmada-host (the karmada-apiserver), `flotilla controller-manager` running against
# it in the background, the example interpreter webhook when asked, member1, member2 and member4.. joined in Push
# mode with `flotilla join`, and member3 (when there are at least 3 members) registered in Pull mode with `flotilla
# register` and served by a `flotilla agent` process, as Karmada's local-up does (pid in DATA_DIR/agent-member3.pid,
# log in DATA_DIR/agent-member3.log; DATA_DIR/agent-member3.sh starts it again, as DATA_DIR/controller-manager.sh
# starts the controller manager). kind mode makes kind clusters; kube mode starts real kube-apiservers with hack/kube.sh (members
# with kube-controller-manager, kube-scheduler and KWOK's fake Nodes). A rerun keeps clusters that still run.
# Uses what local-up.sh set: root, bin, mode, data_dir, kube_dir, pid_file, log_file, ready_timeout, say, fail.
# In kube mode the controller manager also serves karmada-webhook's validations (deletion protection,
# ResourceInterpreterCustomization validation) with a self-signed certificate for 127.0.0.1 and registers them
# with karmada-host; kind's API server runs in a container that cannot reach the host's 127.0.0.1, so kind mode
# does not.
# In kube mode the controller manager also serves Karmada's aggregated API (cluster.karmada.io with the
# clusters/{name}/proxy subresource karmadactl's member commands use; docs/CLUSTER_PROXY.md) with a self-signed
# certificate and registers it with karmada-host's aggregator through an ExternalName Service; in kind mode the
# Cluster CRD serves cluster.karmada.io on its own, without the proxy.
# Environment: FLOTILLA_METRICS_ADDR (default 127.0.0.1:8080), FLOTILLA_WEBHOOK_ADDR (the example webhook, default
# 127.0.0.1:8445), FLOTILLA_KARMADA_WEBHOOK_ADDR (karmada-webhook's validations, kube mode, default 127.0.0.1:8443),
# FLOTILLA_AGGREGATED_APISERVER_ADDR (the aggregated API, kube mode, default 127.0.0.1:8444), KIND_NODE_IMAGE
# (kind's default when unset).

members=3
# As `flotilla up` does, the data dir remembers --webhook-example, so a plain rerun serves what the registration in
# karmada-host points at; --no-webhook-example stops it and removes the registration.
webhook_marker="$data_dir/webhook-example.enabled"
webhook=false
[ -f "$webhook_marker" ] && webhook=true
while [ $# -gt 0 ]; do
  case "$1" in
    --members) [ $# -ge 2 ] || fail "--members needs a number"; members=$2; shift 2 ;;
    --members=*) members=${1#--members=}; shift ;;
    --webhook-example) webhook=true; shift ;;
    --no-webhook-example) webhook=false; shift ;;
    *) fail "in $mode mode only --members N, --webhook-example and --no-webhook-example are supported, not '$1' (FLOTILLA_LOCAL_UP_MODE=embedded for the rest)" ;;
  esac
done
case "$members" in ''|*[!0-9]*|0) fail "--members must be a positive number, not '$members'" ;; esac
for tool in kubectl curl; do command -v "$tool" >/dev/null 2>&1 || fail "$tool is needed in $mode mode"; done
metrics_addr=${FLOTILLA_METRICS_ADDR:-127.0.0.1:8080}
webhook_addr=${FLOTILLA_WEBHOOK_ADDR:-127.0.0.1:8445}
karmada_webhook_addr=${FLOTILLA_KARMADA_WEBHOOK_ADDR:-127.0.0.1:8443}
aggregated_addr=${FLOTILLA_AGGREGATED_APISERVER_ADDR:-127.0.0.1:8444}
clusters_dir="$data_dir/$mode"
mkdir -p "$clusters_dir"

# Creates kind cluster $1 (kept when it already exists) and writes its kubeconfig, context renamed to $2, to $3.
kind_cluster() {
  local name=$1 context=$2 out=$3
  if ! kind get clusters 2>/dev/null | grep -qx "$name"; then
    say "creating kind cluster $name"
    kind create cluster --name "$name" ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"} --kubeconfig "$out.tmp" >&2 \
      || fail "kind create cluster --name $name failed"
  fi
  kind get kubeconfig --name "$name" >"$out" || fail "kind get kubeconfig --name $name failed"
  rm -f "$out.tmp"
  kubectl --kubeconfig "$out" config rename-context "kind-$name" "$context" >/dev/null \
    || fail "could not rename context kind-$name to $context"
}

# Starts real cluster $1 (kept when it still runs) with hack/kube.sh and writes its kubeconfig, context renamed
# to $2, to $3; $4 is its role (member or control-plane).
kube_cluster() {
  local name=$1 context=$2 out=$3 role=$4 config
  if "$root/hack/kube.sh" running "$clusters_dir/$name"; then
    config="$clusters_dir/$name/kubeconfig"
  else
    say "starting cluster $name ($role)"
    config=$("$root/hack/kube.sh" up "$name" "$clusters_dir" "$role") || fail "starting cluster $name failed"
  fi
  cp "$config" "$out"
  if [ "$name" != "$context" ]; then
    kubectl --kubeconfig "$out" config rename-context "$name" "$context" >/dev/null \
      || fail "could not rename context $name to $context"
  fi
}

# Writes script $1 that starts the command "${@:5}" in the background in a session of its own (output appended
# to $3, pid written to $2) and, when $4 is a URL, waits until it answers "ok" (up to ready_timeout). This script
# runs it, and so can whoever restarts the process later (the e2e tests do); hack/local-down.sh stops it by its pid
# file.
background_script() {
  local script=$1 pid=$2 log=$3 ready_url=$4
  shift 4
  local what="flotilla $2"
  {
    echo '#!/usr/bin/env bash'
    echo "# Written by hack/local-up.sh: starts \`$what\` in the background (output appended to $log, pid in"
    echo "# $pid). Arguments given to it are added to the command's (to try a flag, e.g. the controller manager's"
    echo "# \`--feature-gates Failover=false\`)."
    echo 'set -euo pipefail'
    printf 'setsid nohup'
    printf ' %q' "$@"
    printf ' "$@" >>%q 2>&1 </dev/null &\n' "$log"
    printf 'pid=$!\necho "$pid" >%q\n' "$pid"
    if [ -n "$ready_url" ]; then
      printf 'deadline=$((SECONDS + %d))\n' "$ready_timeout"
      printf 'until [ "$(curl -fsS %q 2>/dev/null)" = ok ]; do\n' "$ready_url"
      printf '  kill -0 "$pid" 2>/dev/null || { echo "%s exited (log: %q)" >&2; exit 1; }\n' "$what" "$log"
      printf '  [ "$SECONDS" -lt "$deadline" ] || { echo "%s was not ready within %ds" >&2; exit 1; }\n' "$what" "$ready_timeout"
      printf '  sleep 0.2\ndone\n'
    fi
  } >"$script"
  chmod +x "$script"
}

cluster() {
  case "$mode" in
    kind) kind_cluster "$1" "$2" "$3" ;;
    kube) kube_cluster "$@" ;;
  esac
}

cluster karmada-host karmada-apiserver "$kube_dir/karmada.config" control-plane
member_configs=()
for i in $(seq 1 "$members"); do
  cluster "member$i" "member$i" "$clusters_dir/member$i.config" member
  member_configs+=("$clusters_dir/member$i.config")
done
(IFS=:; KUBECONFIG="${member_configs[*]}" kubectl config view --flatten) >"$kube_dir/members.config" \
  || fail "could not merge the members' kubeconfigs"
chmod 600 "$kube_dir/karmada.config" "$kube_dir/members.config"
karmada=(--kubeconfig "$kube_dir/karmada.config" --context karmada-apiserver)

say "installing Flotilla's CRDs in karmada-host"
kubectl "${karmada[@]}" apply --server-side -f "$root/manifests/crds/" >&2 || fail "installing the CRDs failed"
kubectl "${karmada[@]}" wait --for=condition=established --timeout="${ready_timeout}s" -f "$root/manifests/crds/" >&2 \
  || fail "the CRDs were not established within ${ready_timeout}s"
kubectl "${karmada[@]}" create namespace karmada-system --dry-run=client -o yaml | kubectl "${karmada[@]}" apply -f - >&2
# As Karmada's hack/deploy-karmada.sh applies artifacts/deploy/cluster-proxy-admin-rbac.yaml (and karmadactl init
# creates the same): user system:admin may proxy to every member through the aggregated API.
kubectl "${karmada[@]}" apply -f "$root/manifests/cluster-proxy-admin-rbac.yaml" >&2 \
  || fail "granting system:admin the members' proxy (cluster-proxy-admin) failed"
# As Karmada's local-up does: cluster-info in kube-public (the control plane's URL and CA, as its kubeconfig names
# them) and the RBAC that lets a bootstrap token register a Pull-mode member and the agentcsrapproving controller
# approve its agent's certificate request.
server=$(kubectl "${karmada[@]}" config view --minify --flatten -o jsonpath='{.clusters[0].cluster.server}') \
  || fail "could not read the control plane's server from $kube_dir/karmada.config"
ca_data=$(kubectl "${karmada[@]}" config view --minify --flatten \
  -o jsonpath='{.clusters[0].cluster.certificate-authority-data}') \
  || fail "could not read the control plane's CA from $kube_dir/karmada.config"
[ -n "$server" ] && [ -n "$ca_data" ] || fail "$kube_dir/karmada.config names no server or CA for karmada-apiserver"
sed -e "s|FLOTILLA_SERVER|$server|g" -e "s|FLOTILLA_CA_DATA|$ca_data|g" "$root/manifests/bootstrap-token-configuration.yaml" \
  | kubectl "${karmada[@]}" apply -f - >&2 || fail "applying the bootstrap-token configuration failed"

# Karmada's own local-up runs its controller manager with every alpha and beta gate on and with the controllers
# its deployment enables beyond the defaults, and lets the taint manager evict; so does this one (gates and
# controllers Flotilla does not have yet are named in its log).
manager_flags=(--kubeconfig "$kube_dir/karmada.config" --context karmada-apiserver --metrics-addr "$metrics_addr"
  --feature-gates "${FLOTILLA_FEATURE_GATES:-AllAlpha=true,AllBeta=true}"
  --controllers "${FLOTILLA_CONTROLLERS:-*,hpaScaleTargetMarker,deploymentReplicasSyncer}"
  --enable-no-execute-taint-eviction=true)
if [ "$mode" = kube ]; then
  manager_flags+=(--webhook-addr "$karmada_webhook_addr" --webhook-self-signed --webhook-url "https://$karmada_webhook_addr"
    --allow-no-execute-taint-policy
    --aggregated-apiserver-addr "$aggregated_addr" --aggregated-apiserver-self-signed
    --aggregated-apiserver-url "https://$aggregated_addr")
fi
[ -s "$log_file" ] && mv -f "$log_file" "$log_file.1"
manager_script="$data_dir/controller-manager.sh"
background_script "$manager_script" "$pid_file" "$log_file" "http://$metrics_addr/readyz" \
  "$bin" controller-manager "${manager_flags[@]}"
say "starting flotilla controller-manager and waiting for it to be ready..."
"$manager_script" || { tail -n 20 "$log_file" >&2; fail "the controller manager did not start (log: $log_file)"; }
pid=$(cat "$pid_file")
say "flotilla controller-manager is ready (pid $pid)"

if [ "$webhook" = true ]; then
  webhook_out="$data_dir/webhook-example.out"
  : >"$webhook_out"
  nohup "$bin" webhook-example --listen "$webhook_addr" --configuration-out "$data_dir/webhook-configuration.yaml" \
    >"$webhook_out" 2>"$data_dir/webhook-example.log" </dev/null &
  echo $! >"$webhook_pid_file"
  deadline=$((SECONDS + ready_timeout))
  until grep -q '^ready: ' "$webhook_out"; do
    kill -0 "$(cat "$webhook_pid_file")" 2>/dev/null || { tail -n 20 "$data_dir/webhook-example.log" >&2; fail "the example webhook exited"; }
    [ "$SECONDS" -lt "$deadline" ] || fail "the example webhook was not ready within ${ready_timeout}s"
    sleep 0.1
  done
  kubectl "${karmada[@]}" apply -f "$data_dir/webhook-configuration.yaml" >&2 || fail "registering the example webhook failed"
  : >"$webhook_marker"
  say "example interpreter webhook serving on $webhook_addr (pid $(cat "$webhook_pid_file"))"
elif [ -f "$data_dir/webhook-configuration.yaml" ]; then
  # Registered by an earlier run and no longer served: every Workload operation would fail against it.
  kubectl "${karmada[@]}" delete --ignore-not-found -f "$data_dir/webhook-configuration.yaml" >&2 \
    || fail "removing the example webhook's registration failed"
  rm -f "$data_dir/webhook-configuration.yaml" "$webhook_marker"
  say "removed the example webhook's registration, as it is not served"
fi

# member3 is the Pull member, as in Karmada's local-up and `flotilla up`.
pull_member=member3
for i in $(seq 1 "$members"); do
  if [ "member$i" = "$pull_member" ]; then
    say "registering member$i in Pull mode"
    # The agent gets a bootstrap token, not the administrator's credentials: with it, it obtains a client
    # certificate of user system:karmada:agent:member$i, which may touch member$i's objects only.
    "$bin" register "member$i" --kubeconfig "$kube_dir/karmada.config" --karmada-context karmada-apiserver \
      --cluster-kubeconfig "$kube_dir/members.config" --cluster-context "member$i" \
      --bootstrap-kubeconfig "$data_dir/agent-member$i-bootstrap.config" >&2 \
      || fail "registering member$i failed"
    continue
  fi
  say "joining member$i"
  "$bin" join "member$i" --kubeconfig "$kube_dir/karmada.config" --karmada-context karmada-apiserver \
    --cluster-kubeconfig "$kube_dir/members.config" --cluster-context "member$i" >&2 || fail "joining member$i failed"
done

agent_note=""
if [ "$members" -ge 3 ]; then
  # A script that (re)starts the agent in the background, for this run and for whoever restarts it later (the e2e
  # tests do); hack/local-down.sh stops it by its pid file.
  agent_script="$data_dir/agent-$pull_member.sh"
  agent_pid_file="$data_dir/agent-$pull_member.pid"
  agent_log="$data_dir/agent-$pull_member.log"
  background_script "$agent_script" "$agent_pid_file" "$agent_log" "" "$bin" agent \
    --bootstrap-kubeconfig "$data_dir/agent-$pull_member-bootstrap.config" --controllers '*,certRotation' \
    --cluster-kubeconfig "$kube_dir/members.config" --cluster-context "$pull_member" --cluster-name "$pull_member"
  [ -s "$agent_log" ] && mv -f "$agent_log" "$agent_log.1"
  "$agent_script" || fail "the agent of $pull_member did not start (log: $agent_log)"
  say "flotilla agent for $pull_member started (pid $(cat "$agent_pid_file")), waiting for $pull_member to be Ready..."
  deadline=$((SECONDS + ready_timeout))
  until [ "$(kubectl "${karmada[@]}" get cluster "$pull_member" \
      -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; do
    kill -0 "$(cat "$agent_pid_file")" 2>/dev/null || { tail -n 20 "$agent_log" >&2; fail "the agent of $pull_member exited (log: $agent_log)"; }
    [ "$SECONDS" -lt "$deadline" ] || fail "$pull_member was not Ready within ${ready_timeout}s (agent log: $agent_log)"
    sleep 0.5
  done
  agent_note="
$pull_member is a Pull cluster served by \`flotilla agent\` (pid $(cat "$agent_pid_file"); log $agent_log;
$agent_script starts it again); the members' kubeconfig still reaches it directly.
"
fi

case "$mode" in
  kind) where="kind cluster karmada-host"; keep="not the kind clusters: \`kind delete clusters karmada-host member1 ...\` removes them"
    again="restarts them and keeps every object" ;;
  kube) where="real cluster karmada-host (kube-apiserver, state in $clusters_dir; karmada-webhook validations on https://$karmada_webhook_addr)"; keep="and the clusters, whose logs stay in $clusters_dir"
    again="starts the clusters afresh (hack/kube.sh gives each start an empty etcd)" ;;
esac
cat <<MSG

Flotilla's controller manager is running against $where (pid $pid; log $log_file).

  export KUBECONFIG=$kube_dir/karmada.config        # context karmada-apiserver
  kubectl get clusters
  kubectl --kubeconfig $kube_dir/members.config --context member1 get deployments

What it did with each template: http://$metrics_addr/ in a browser, or \`flotilla status --url http://$metrics_addr\`.
$agent_note
To stop it:  FLOTILLA_DATA_DIR=$data_dir hack/local-down.sh     (stops the controller manager, the agent and the
example webhook, $keep). Running local-up again $again.
MSG
