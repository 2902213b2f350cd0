#!/usr/bin/env bash
# Real Kubernetes clusters on loopback, for tests and `FLOTILLA_LOCAL_UP_MODE=kube`: kube-apiserver with etcd, and
# for a member also kube-controller-manager with all its controllers, kube-scheduler and KWOK's fake Nodes, so
# that real controllers give workloads their status. Nothing here is part of the product.
#
#   hack/kube.sh build                       build the binaries once (cached), print their directory
#   hack/kube.sh up NAME DIR [ROLE]          start cluster NAME with its state in DIR/NAME; ROLE is member
#                                            (default) or control-plane; prints the kubeconfig's path once
#                                            its API server is ready and its controller manager issues tokens
#   hack/kube.sh down DIR/NAME               stop it (its state stays; `up` again starts it afresh)
#   hack/kube.sh running DIR/NAME            exit 0 when it runs and its API server is ready
#
# The binaries are built from the Go module proxy with the pinned modules in hack/kube/{k8s,etcd,kwok,metrics-server}
# (kube-apiserver, kube-controller-manager and kube-scheduler v1.37.2, etcd v3.6.16, kwok v0.8.0, metrics-server
# v0.8.0) into FLOTILLA_KUBE_CACHE (default ~/.cache/flotilla/kube-v1.37.2), about 13 minutes on 2 cores from an
# empty Go cache (metrics-server alone about 5); a later run finds them and takes seconds. A change to a tool's
# pinned modules rebuilds that tool.
#
# Every kube-apiserver has a front proxy (pki/front-proxy-ca.crt, pki/front-proxy-client.{crt,key}), so aggregated
# API servers work: Flotilla's controller manager registers cluster.karmada.io as one (docs/CLUSTER_PROXY.md).
# A control plane runs kube-controller-manager restricted as Karmada's karmada-apiserver's is (no workload
# controllers, so templates keep the status Flotilla aggregates). A member gets FLOTILLA_KUBE_NODES (default 3)
# fake Nodes named NAME-node-1.. with 32 CPUs, 256Gi memory and 110 pods each, labelled with zone NAME-zone-<i>
# and region NAME-region, whose kubelet is KWOK's server on 127.0.0.1 (pod logs and exec: hack/kube/debugging.yaml);
# kube-apiserver tries a Node's InternalIP first (--kubelet-preferred-address-types), as the embedded server does,
# since the Nodes' host names resolve nowhere. Memory: about 450 MB for a control plane and 650 MB for a member.
# FLOTILLA_KUBE_MEMBER_QPS sets a member's kube-controller-manager's --kube-api-qps (burst twice that); unset, it
# keeps Kubernetes' default of 20, as kind's clusters do, at which a member's own controllers need about 72 s to
# bring up 300 single-replica Deployments (docs/BENCHMARKS.md); crates/flotilla/tests/propagation_writes.rs sets 1000.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${FLOTILLA_KUBE_CACHE:-$HOME/.cache/flotilla/kube-v1.37.2}
bin="$cache/bin"
kube_version=v1.37.2

say() { echo "kube: $*" >&2; }
fail() { echo "kube: error: $*" >&2; exit 1; }

# The hash of what one tool's build depends on, its pinned modules (hack/kube/TOOL): a change rebuilds that tool.
tool_key() {
  cat "$root/hack/kube/$1/go.mod" "$root/hack/kube/$1/go.sum" | sha256sum | cut -c1-16
}

# Before the tools had keys of their own, one key covered these three; a cache built then is reused.
legacy_key() {
  cat "$root"/hack/kube/{etcd,k8s,kwok}/go.mod "$root"/hack/kube/{etcd,k8s,kwok}/go.sum | sha256sum | cut -c1-16
}

# Builds TOOL's binaries (the remaining arguments) unless its key says they are current.
build_tool() {
  local tool=$1; shift
  local key
  key=$(tool_key "$tool")
  [ -f "$cache/built-$tool" ] && [ "$(cat "$cache/built-$tool")" = "$key" ] && return
  command -v go >/dev/null 2>&1 || fail "go is needed to build the test clusters' binaries ($tool)"
  mkdir -p "$bin"
  local start=$SECONDS
  say "building $tool into $bin"
  (cd "$root/hack/kube/$tool" && go build -buildvcs=false -trimpath "$@") >&2 || fail "building $tool failed"
  built_now="$built_now $tool"
  echo "$key" >"$cache/built-$tool"
  say "built $tool in $((SECONDS - start)) s"
}

build() {
  mkdir -p "$cache"
  if [ -f "$cache/built" ] && [ "$(cat "$cache/built")" = "$(legacy_key)" ]; then
    for tool in etcd k8s kwok; do [ -f "$cache/built-$tool" ] || tool_key "$tool" >"$cache/built-$tool"; done
  fi
  # A build cache of its own, removed once the binaries are built: it grows to 4.4 GB, which a fresh CI machine's
  # disk must not carry through the Rust build, and nothing reads it again unless a pin changes.
  export GOCACHE="$cache/go-build"
  local version=k8s.io/component-base/version built_now=""
  # Clients parse the server's /version, so stamp it as a release build would be.
  build_tool k8s -ldflags "-s -w -X $version.gitVersion=$kube_version -X $version.gitMajor=1 -X $version.gitMinor=37 -X $version.gitTreeState=clean" \
    -o "$bin/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler
  build_tool etcd -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3
  build_tool kwok -ldflags "-s -w" -o "$bin/kwok" sigs.k8s.io/kwok/cmd/kwok
  build_tool metrics-server -ldflags "-s -w" -o "$bin/metrics-server" sigs.k8s.io/metrics-server/cmd/metrics-server
  # KWOK's stage and metrics definitions ship in its module, next to its source.
  if [ ! -s "$cache/metrics/usage-from-annotation.yaml" ] || [[ " $built_now " == *" kwok "* ]]; then
    local kwok_dir
    kwok_dir=$(cd "$root/hack/kube/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok) || fail "cannot locate kwok's module"
    rm -rf "$cache/stages" "$cache/metrics" && mkdir -p "$cache/stages" "$cache/metrics"
    for stage in node/fast node/heartbeat-with-lease pod/fast; do
      local file out="$cache/stages/${stage//\//-}.yaml"
      for file in "$kwok_dir/kustomize/stage/$stage"/*.yaml; do
        [ "$(basename "$file")" = kustomization.yaml ] && continue
        { echo ---; cat "$file"; } >>"$out"
      done
      [ -s "$out" ] || fail "kwok's stage $stage is missing from $kwok_dir"
    done
    # The kubelet's /metrics/resource of every fake Node, and each pod's usage from its annotations
    # kwok.x-k8s.io/usage-cpu and kwok.x-k8s.io/usage-memory (1m and 1Mi per container without them).
    cp "$kwok_dir/kustomize/metrics/resource/metrics-resource.yaml" "$kwok_dir/kustomize/metrics/usage/usage-from-annotation.yaml" \
      "$cache/metrics/" || fail "kwok's metrics definitions are missing from $kwok_dir"
  fi
  rm -rf "$GOCACHE"
  echo "$bin"
}

# A loopback port free now, from below the ephemeral range (hack/free-ports.py says why).
free_port() {
  python3 "$root/hack/free-ports.py"
}

# Starts "$@" in the background with its output in $dir/logs/$1.log and its pid in $dir/pids/$1.
spawn() {
  local name=$1; shift
  nohup "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name"
}

# Waits until `curl` of $1 answers 'ok' from the cluster's API server, or fails naming $2's log.
wait_ok() {
  local url=$1 what=$2 deadline=$((SECONDS + ${FLOTILLA_KUBE_TIMEOUT:-180}))
  until [ "$(curl -fsS --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" "$url" 2>/dev/null)" = ok ]; do
    kill -0 "$(cat "$dir/pids/$what")" 2>/dev/null || { tail -n 30 "$dir/logs/$what.log" >&2; fail "$what of $name exited (log: $dir/logs/$what.log)"; }
    [ "$SECONDS" -lt "$deadline" ] || { tail -n 30 "$dir/logs/$what.log" >&2; fail "$what of $name was not ready in time (log: $dir/logs/$what.log)"; }
    sleep 0.5
  done
}

pki() {
  local p="$dir/pki"
  mkdir -p "$p"
  [ -f "$p/ca.crt" ] && return
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$name-ca" \
    -keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
  # The serving certificate names every address a client on this machine may use.
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$p/apiserver.key" -out "$p/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.96.0.1\nextendedKeyUsage=serverAuth\n' >"$p/apiserver.ext"
  openssl x509 -req -in "$p/apiserver.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 3650 \
    -extfile "$p/apiserver.ext" -out "$p/apiserver.crt" 2>/dev/null
  # The admin identity every component and the kubeconfig use (system:masters: cluster-admin): kind's
  # kubernetes-admin in a member, Karmada's system:admin in a control plane (karmadactl init and Karmada's local-up
  # make that certificate; Karmada's cluster-proxy-admin grants system:admin the clusters/proxy subresource, and the
  # members let the impersonator act as that user only: impersonating a user needs its name, not its group).
  local admin_cn=kubernetes-admin
  [ "$role" = control-plane ] && admin_cn=system:admin
  openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=$admin_cn" -keyout "$p/admin.key" -out "$p/admin.csr" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >"$p/admin.ext"
  openssl x509 -req -in "$p/admin.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 3650 \
    -extfile "$p/admin.ext" -out "$p/admin.crt" 2>/dev/null
  openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
  openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  front_proxy_pki
}

# The front proxy, as kubeadm sets it up: kube-apiserver's aggregator calls aggregated API servers (Flotilla's
# karmada-aggregated-apiserver for cluster.karmada.io) with this client certificate, and they trust its CA through
# ConfigMap kube-system/extension-apiserver-authentication. Made for clusters whose pki predates it too.
front_proxy_pki() {
  local p="$dir/pki"
  [ -f "$p/front-proxy-client.crt" ] && return
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$name-front-proxy-ca" \
    -keyout "$p/front-proxy-ca.key" -out "$p/front-proxy-ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=front-proxy-client" \
    -keyout "$p/front-proxy-client.key" -out "$p/front-proxy-client.csr" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >"$p/front-proxy-client.ext"
  openssl x509 -req -in "$p/front-proxy-client.csr" -CA "$p/front-proxy-ca.crt" -CAkey "$p/front-proxy-ca.key" \
    -CAcreateserial -days 3650 -extfile "$p/front-proxy-client.ext" -out "$p/front-proxy-client.crt" 2>/dev/null
}

kubeconfig() {
  local port=$1 b64="base64 -w0"
  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $name
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $($b64 <"$dir/pki/ca.crt")
users:
- name: $name-admin
  user:
    client-certificate-data: $($b64 <"$dir/pki/admin.crt")
    client-key-data: $($b64 <"$dir/pki/admin.key")
contexts:
- name: $name
  context:
    cluster: $name
    user: $name-admin
current-context: $name
EOF
  chmod 600 "$dir/kubeconfig"
}

nodes() {
  local count=${FLOTILLA_KUBE_NODES:-3} i body
  for i in $(seq 1 "$count"); do
    body=$(printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","annotations":{"kwok.x-k8s.io/node":"fake","metrics.k8s.io/resource-metrics-path":"/metrics/nodes/%s/metrics/resource"},"labels":{"type":"kwok","kubernetes.io/hostname":"%s","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","topology.kubernetes.io/zone":"%s","topology.kubernetes.io/region":"%s"}},"status":{"allocatable":%s,"capacity":%s}}' \
      "$name-node-$i" "$name-node-$i" "$name-node-$i" "$name-zone-$i" "$name-region" "$node_resources" "$node_resources")
    curl -fsS --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
      -H 'Content-Type: application/json' -d "$body" "https://127.0.0.1:$(cat "$dir/port")/api/v1/nodes" >>"$dir/logs/nodes.log" 2>&1 \
      || { cat "$dir/logs/nodes.log" >&2; fail "creating Node $name-node-$i failed"; }
  done
}
node_resources='{"cpu":"32","memory":"256Gi","pods":"110","ephemeral-storage":"100Gi"}'

# A member's metrics-server: it scrapes each fake Node's kubelet, KWOK's server, at the path the Node's annotation
# names (KWOK serves every Node's /metrics/resource under /metrics/nodes/NODE), and serves metrics.k8s.io through
# the aggregator: APIService v1beta1.metrics.k8s.io and an ExternalName Service for 127.0.0.1, as an aggregated API
# server outside the cluster is registered. Usage comes from KWOK's usage-from-annotation (see build).
metrics_server() {
  local port api="https://127.0.0.1:$(cat "$dir/port")"
  port=$(free_port)
  mkdir -p "$dir/metrics-server"
  spawn metrics-server "$bin/metrics-server" --kubeconfig "$dir/kubeconfig" \
    --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$port" --cert-dir "$dir/metrics-server" \
    --kubelet-insecure-tls --kubelet-use-node-status-port --kubelet-preferred-address-types InternalIP \
    --metric-resolution 10s --kubelet-request-timeout 5s
  local c=(curl -fsS --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key"
    -H 'Content-Type: application/json')
  "${c[@]}" -d "{\"metadata\":{\"name\":\"metrics-server\",\"namespace\":\"kube-system\"},\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"127.0.0.1\",\"ports\":[{\"name\":\"https\",\"port\":$port,\"targetPort\":$port}]}}" \
    "$api/api/v1/namespaces/kube-system/services" >>"$dir/logs/metrics-server-registration.log" 2>&1 \
    || { cat "$dir/logs/metrics-server-registration.log" >&2; fail "creating Service kube-system/metrics-server in $name failed"; }
  "${c[@]}" -d "{\"metadata\":{\"name\":\"v1beta1.metrics.k8s.io\"},\"spec\":{\"group\":\"metrics.k8s.io\",\"version\":\"v1beta1\",\"service\":{\"namespace\":\"kube-system\",\"name\":\"metrics-server\",\"port\":$port},\"insecureSkipTLSVerify\":true,\"groupPriorityMinimum\":100,\"versionPriority\":100}}" \
    "$api/apis/apiregistration.k8s.io/v1/apiservices" >>"$dir/logs/metrics-server-registration.log" 2>&1 \
    || { cat "$dir/logs/metrics-server-registration.log" >&2; fail "creating APIService v1beta1.metrics.k8s.io in $name failed"; }
}

# Waits until the cluster's kube-controller-manager issues ServiceAccount tokens, by asking it for one: a probe
# ServiceAccount's token Secret in kube-system, removed again once filled. Registering a cluster with Flotilla
# waits only 30 s for such a token (as Karmada does), so a controller manager that died or lags is reported here,
# with its log, instead of there.
wait_tokens() {
  local api="https://127.0.0.1:$(cat "$dir/port")/api/v1/namespaces/kube-system" probe=flotilla-kube-probe
  local deadline=$((SECONDS + ${FLOTILLA_KUBE_TIMEOUT:-180}))
  local c=(curl -fsS --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key"
    -H 'Content-Type: application/json')
  "${c[@]}" -d "{\"metadata\":{\"name\":\"$probe\"}}" "$api/serviceaccounts" >>"$dir/logs/probe.log" 2>&1 \
    || { cat "$dir/logs/probe.log" >&2; fail "creating ServiceAccount kube-system/$probe in $name failed"; }
  "${c[@]}" -d "{\"metadata\":{\"name\":\"$probe\",\"annotations\":{\"kubernetes.io/service-account.name\":\"$probe\"}},\"type\":\"kubernetes.io/service-account-token\"}" \
    "$api/secrets" >>"$dir/logs/probe.log" 2>&1 \
    || { cat "$dir/logs/probe.log" >&2; fail "creating Secret kube-system/$probe in $name failed"; }
  until "${c[@]}" "$api/secrets/$probe" 2>/dev/null | grep -q '"token"'; do
    kill -0 "$(cat "$dir/pids/kube-controller-manager")" 2>/dev/null || {
      tail -n 30 "$dir/logs/kube-controller-manager.log" >&2
      fail "kube-controller-manager of $name exited (log: $dir/logs/kube-controller-manager.log)"
    }
    [ "$SECONDS" -lt "$deadline" ] || {
      tail -n 30 "$dir/logs/kube-controller-manager.log" >&2
      fail "kube-controller-manager of $name issued no ServiceAccount token in time (log: $dir/logs/kube-controller-manager.log)"
    }
    sleep 0.5
  done
  # The token controller removes the Secret with its ServiceAccount.
  "${c[@]}" -X DELETE "$api/serviceaccounts/$probe" >>"$dir/logs/probe.log" 2>&1 || true
}

up() {
  [ $# -ge 2 ] || fail "usage: hack/kube.sh up NAME DIR [member|control-plane]"
  name=$1
  local role=${3:-member}
  case "$role" in member | control-plane) ;; *) fail "ROLE must be member or control-plane, not '$role'" ;; esac
  case "$name" in '' | *[!a-z0-9-]*) fail "NAME must be a DNS label, not '$name'" ;; esac
  build >/dev/null
  dir=$(mkdir -p "$2/$name" && cd "$2/$name" && pwd)
  [ ! -f "$dir/pids/kube-apiserver" ] || ! kill -0 "$(cat "$dir/pids/kube-apiserver")" 2>/dev/null \
    || fail "cluster $name is already running in $dir (hack/kube.sh down $dir)"
  # A fresh cluster each time: etcd's data and the logs of an earlier run go.
  rm -rf "$dir/etcd" "$dir/logs" "$dir/pids"
  mkdir -p "$dir/logs" "$dir/pids"
  pki
  front_proxy_pki
  local etcd_port peer_port api_port
  { read -r etcd_port; read -r peer_port; read -r api_port; } < <(python3 "$root/hack/free-ports.py" 3)
  echo "$api_port" >"$dir/port"
  kubeconfig "$api_port"
  # etcd without fsync: these clusters are disposable, and fsync on shared disks dominates test time.
  spawn etcd "$bin/etcd" --name "$name" --data-dir "$dir/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "$name=http://127.0.0.1:$peer_port" --log-level warn
  spawn kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --secure-port "$api_port" --advertise-address 127.0.0.1 \
    --tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
    --client-ca-file "$dir/pki/ca.crt" --authorization-mode Node,RBAC --allow-privileged --enable-bootstrap-token-auth \
    --service-account-key-file "$dir/pki/sa.pub" --service-account-signing-key-file "$dir/pki/sa.key" \
    --service-account-issuer "https://kubernetes.default.svc" --service-cluster-ip-range 10.96.0.0/16 \
    --endpoint-reconciler-type none --kubelet-preferred-address-types InternalIP,InternalDNS,ExternalIP,ExternalDNS,Hostname \
    --requestheader-client-ca-file "$dir/pki/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$dir/pki/front-proxy-client.crt" --proxy-client-key-file "$dir/pki/front-proxy-client.key"
  # Not --enable-aggregator-routing: with it the aggregator reaches APIServices only through EndpointSlices and
  # refuses ExternalName Services, which is how an aggregated API server on 127.0.0.1 is registered.
  wait_ok "https://127.0.0.1:$api_port/readyz" kube-apiserver
  local client_flags=()
  if [ "$role" = member ] && [ -n "${FLOTILLA_KUBE_MEMBER_QPS:-}" ]; then
    client_flags=(--kube-api-qps "$FLOTILLA_KUBE_MEMBER_QPS" --kube-api-burst "$((FLOTILLA_KUBE_MEMBER_QPS * 2))")
  fi
  local controllers="*,bootstrapsigner,tokencleaner"
  # Karmada's karmada-apiserver runs no workload controllers: the templates' status is Karmada's to write.
  [ "$role" = control-plane ] && controllers="namespace,garbagecollector,serviceaccount-token,serviceaccount,ttl-after-finished,bootstrapsigner,tokencleaner,csrcleaner,csrsigning,csrapproving,clusterrole-aggregation,root-ca-cert-publisher"
  spawn kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$dir/kubeconfig" \
    --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$(free_port)" --leader-elect=false --controllers "$controllers" \
    --service-account-private-key-file "$dir/pki/sa.key" --root-ca-file "$dir/pki/ca.crt" \
    --cluster-signing-cert-file "$dir/pki/ca.crt" --cluster-signing-key-file "$dir/pki/ca.key" \
    --use-service-account-credentials=false "${client_flags[@]}"
  if [ "$role" = member ]; then
    spawn kube-scheduler "$bin/kube-scheduler" --kubeconfig "$dir/kubeconfig" \
      --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
      --bind-address 127.0.0.1 --secure-port "$(free_port)" --leader-elect=false
    # KWOK renews each fake Node's Lease (the heartbeat stage only rewrites node status every ten minutes, so
    # without leases the node lifecycle controller marks the Nodes NotReady after 40 s and evicts their pods).
    # KWOK's server is every fake Node's kubelet: the Nodes report it as their InternalIP 127.0.0.1 and kubelet
    # port (--node-ip, --node-port), and it serves HTTPS there (a certificate of its own, which kube-apiserver,
    # given no kubelet CA, does not verify) with the logs and exec of hack/kube/debugging.yaml. KWOK runs with PATH
    # alone in its environment, which the commands exec'd through it inherit.
    local kubelet_port
    kubelet_port=$(free_port)
    mkdir -p "$dir/exec"
    sed -e "s|@LOGS_FILE@|$root/hack/kube/logs/container.log|" -e "s|@EXEC_DIR@|$dir/exec|" \
      "$root/hack/kube/debugging.yaml" >"$dir/kwok-debugging.yaml"
    spawn kwok env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      "$bin/kwok" --kubeconfig "$dir/kubeconfig" --manage-all-nodes=false \
      --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
      --server-address "127.0.0.1:$kubelet_port" --node-port "$kubelet_port" --node-ip 127.0.0.1 \
      --cidr 10.240.0.0/16 --node-lease-duration-seconds 40 \
      --config "$cache/stages/node-fast.yaml" --config "$cache/stages/node-heartbeat-with-lease.yaml" \
      --config "$cache/stages/pod-fast.yaml" --config "$root/hack/kube/stages/pod-image-pull-back-off.yaml" \
      --config "$dir/kwok-debugging.yaml" \
      --config "$cache/metrics/metrics-resource.yaml" --config "$cache/metrics/usage-from-annotation.yaml"
    nodes
    metrics_server
  fi
  wait_tokens
  say "cluster $name ($role) is up on https://127.0.0.1:$api_port (state and logs in $dir)"
  echo "$dir/kubeconfig"
}

down() {
  [ $# -ge 1 ] || fail "usage: hack/kube.sh down DIR/NAME"
  dir=$1
  [ -d "$dir/pids" ] || return 0
  local component pid
  # Clients first, etcd last, so nothing logs a storm of connection errors on the way down.
  for component in metrics-server kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
    [ -f "$dir/pids/$component" ] || continue
    pid=$(cat "$dir/pids/$component")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$dir/pids/$component"
  done
}

running() {
  [ $# -ge 1 ] || fail "usage: hack/kube.sh running DIR/NAME"
  dir=$1
  [ -f "$dir/pids/kube-apiserver" ] && kill -0 "$(cat "$dir/pids/kube-apiserver")" 2>/dev/null && [ -f "$dir/port" ] || return 1
  [ "$(curl -fsS --max-time 5 --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
    "https://127.0.0.1:$(cat "$dir/port")/readyz" 2>/dev/null)" = ok ]
}

case "${1:-}" in
  build) build ;;
  running) shift; running "$@" ;;
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  *) fail "usage: hack/kube.sh build | up NAME DIR [member|control-plane] | down DIR/NAME | running DIR/NAME" ;;
esac
