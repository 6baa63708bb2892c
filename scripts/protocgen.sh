#!/usr/bin/env bash
# Regenerates the gogoproto Go code from proto/ without the Buf registry:
# protoc from Debian, the generators built from this module's `tool`
# directives (pinned by go.mod and go.sum), third-party imports from the Go
# module cache. Running it on a clean tree changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v protoc >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "protoc not found: installing Debian's protobuf-compiler" >&2
    apt-get update -qq && apt-get install -y -qq protobuf-compiler libprotobuf-dev >/dev/null
  else
    echo "protoc not found: install protobuf-compiler (Debian) or put protoc on PATH" >&2
    exit 1
  fi
fi

tools="$PWD/build/tools"
mkdir -p "$tools"
go build -o "$tools/" \
  github.com/cosmos/gogoproto/protoc-gen-gocosmos \
  github.com/grpc-ecosystem/grpc-gateway/protoc-gen-grpc-gateway

# The module directories of the versions go.mod pins.
moddir() {
  go mod download "$1" >/dev/null
  go list -m -f '{{.Dir}}' "$1"
}
gogo=$(moddir github.com/cosmos/gogoproto)
cosmosproto=$(moddir github.com/cosmos/cosmos-proto)
sdk=$(moddir github.com/cosmos/cosmos-sdk)
gateway=$(moddir github.com/grpc-ecosystem/grpc-gateway)

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

PATH="$tools:$PATH" protoc \
  -I proto \
  -I "$gogo" \
  -I "$cosmosproto/proto" \
  -I "$sdk/proto" \
  -I "$gateway/third_party/googleapis" \
  --gocosmos_out="plugins=grpc,Mgoogle/protobuf/any.proto=github.com/cosmos/gogoproto/types/any:$out" \
  --grpc-gateway_out="logtostderr=true,allow_colon_final_segments=true:$out" \
  proto/inferenced/inference/v1/*.proto

module=$(go list -m)
rm -f x/inference/types/*.pb.go x/inference/types/*.pb.gw.go
cp "$out/$module/x/inference/types/"*.go x/inference/types/
echo "generated: $(ls x/inference/types/*.pb*.go | tr '\n' ' ')"
