// Package sandboxpb is the generated Go code for sandbox.proto, the gRPC
// service a sandbox plugin serves to promptkit-sandbox. The files ending in
// .pb.go are generated and committed; generate.sh (make generate)
// reproduces them byte for byte with pinned generators, and
// TestGeneratedCodeIsFresh fails when they are stale.
package sandboxpb
