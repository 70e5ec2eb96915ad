#!/usr/bin/env bash
# `make image`: pacer's container image (Containerfile), built with podman.
#
#   scripts/image.sh [TAG]          TAG defaults to localhost/pacer:VERSION
#
# With IMAGE_BASE set (e.g. debian:bookworm-slim, for machines that reach a
# registry) both stages start from it. Without it, the bases come from
# Debian's archive: `debootstrap --variant=minbase` of SUITE (bookworm) with
# the packages each stage of the Containerfile lists already installed, so
# the build itself downloads nothing. The two root trees are kept as
# tarballs under the cache (PACER_IMAGE_CACHE, default
# ~/.cache/pacer/image), keyed by suite, architecture and the package
# lists, and imported into podman as localhost/pacer-base:KEY-{build,runtime};
# a second build reuses both (a cold one takes minutes).
#
# Builds use --network host (apt, when a base lacks a package) and
# --pull=never with the local bases, and --layers=false, so the tagged
# image is all a build leaves. CONTAINERS_CONF defaults to
# scripts/containers.conf (runc; ulimits within the machine's limits).
# The image is checked: every library `ldd` lists for the binary inside it
# is found, and `pacer --version` runs.
#
# Prints the tag on the last line of stdout; progress on stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { echo "image: $*" >&2; }

version=$(sed -n 's/^VERSION := //p' Makefile)
tag=${1:-localhost/pacer:$version}
suite=${IMAGE_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$root/scripts/containers.conf}
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

for cmd in podman; do
	command -v "$cmd" >/dev/null || { say "$cmd is missing (scripts/deps.sh installs it)"; exit 1; }
done

# The package list of a stage: the default of its ARG in the Containerfile.
packages() { sed -n "s/^ARG $1=\"\\(.*\\)\"\$/\\1/p" Containerfile; }
build_pkgs=$(packages BUILD_PACKAGES)
runtime_pkgs=$(packages RUNTIME_PACKAGES)
[ -n "$build_pkgs" ] && [ -n "$runtime_pkgs" ] || { say "no package lists in Containerfile"; exit 1; }

args=()
if [ -n "${IMAGE_BASE:-}" ]; then
	args+=(--build-arg "BASE=$IMAGE_BASE")
else
	command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] ||
		{ say "debootstrap is missing (scripts/deps.sh installs it)"; exit 1; }
	export PATH=$PATH:/usr/sbin:/sbin
	arch=$(dpkg --print-architecture)
	# the recipe's version (bump it when the way a base is made changes)
	recipe=2
	hash=$(printf '%s\n' "$recipe" "$mirror" "$build_pkgs" "$runtime_pkgs" | sha256sum | cut -c1-12)
	key=$suite-$arch-$hash
	cache=${PACER_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pacer/image}
	mkdir -p "$cache"
	exec 9>"$cache/.lock"
	flock 9 # one builder of the cache at a time
	# a root tree: minbase and pkgs, apt's lists and downloads removed, as a tarball
	make_base() {
		local stage=$1 pkgs=$2 out=$cache/$key-$1.tar
		[ -s "$out" ] && return 0
		if [ "$(id -u)" -ne 0 ]; then
			say "the $stage base is not cached yet, and debootstrap needs root: run make image as root once, or give IMAGE_BASE (a base image with apt)"
			return 1
		fi
		local t0=$SECONDS tree
		tree=$(mktemp -d /var/tmp/pacer-base.XXXXXX)
		say "debootstrap $suite ($arch, minbase + ${pkgs// /,}) from $mirror: a few minutes, once"
		if ! nice debootstrap --variant=minbase --include="${pkgs// /,}" \
			--cache-dir="$cache/debs" "$suite" "$tree" "$mirror" >"$tree.log" 2>&1; then
			tail -20 "$tree.log" >&2
			rm -rf "$tree" "$tree.log"
			say "debootstrap failed"
			return 1
		fi
		rm -rf "$tree"/var/lib/apt/lists/* "$tree"/var/cache/apt/archives/*.deb "$tree.log"
		if [ "$stage" = runtime ]; then
			# as Debian's -slim images: no documentation but the copyrights,
			# no manuals, no translations (now, and in packages added later)
			printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
				'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
				'path-exclude /usr/share/locale/*' >"$tree/etc/dpkg/dpkg.cfg.d/pacer-slim"
			find "$tree/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
			rm -rf "$tree"/usr/share/man/* "$tree"/usr/share/info/* "$tree"/usr/share/locale/*
		fi
		tar --numeric-owner -C "$tree" -cf "$out.tmp" . && mv -f "$out.tmp" "$out"
		rm -rf "$tree"
		say "$stage base: $(du -h "$out" | cut -f1) in $((SECONDS - t0)) s ($out)"
	}
	mkdir -p "$cache/debs"
	make_base runtime "$runtime_pkgs"
	make_base build "$build_pkgs"
	for stage in runtime build; do
		img=localhost/pacer-base:$key-$stage
		if ! podman image exists "$img"; then
			say "importing $img"
			podman import -q "$cache/$key-$stage.tar" "$img" >/dev/null
		fi
	done
	# bases of an older recipe or package list: gone (the tarballs and images)
	for f in "$cache"/*-runtime.tar "$cache"/*-build.tar; do
		[ -e "$f" ] || continue
		case $f in "$cache/$key"-*) ;; *) say "removing the stale base $f"; rm -f "$f" ;; esac
	done
	podman images --format '{{.Repository}}:{{.Tag}}' localhost/pacer-base | while read -r img; do
		case $img in *":$key-"*) ;; *) say "removing the stale base $img"; podman rmi -f "$img" >/dev/null ;; esac
	done
	exec 9>&-
	args+=(--pull=never --build-arg "BASE=localhost/pacer-base:$key-runtime"
	       --build-arg "BUILD_BASE=localhost/pacer-base:$key-build")
fi

t0=$SECONDS
say "building $tag (commit $commit)"
nice podman build --network host --layers=false "${args[@]}" --build-arg "PACER_COMMIT=$commit" \
	-t "$tag" -f Containerfile . >&2
say "built in $((SECONDS - t0)) s: $(podman image inspect -f '{{.Size}}' "$tag") bytes"

# every library the binary links is in the image, and it runs
missing=$(podman run --rm --network none --entrypoint ldd "$tag" /usr/local/bin/pacer | grep 'not found' || true)
if [ -n "$missing" ]; then
	say "the image lacks libraries the binary links:"
	echo "$missing" >&2
	exit 1
fi
podman run --rm --network none "$tag" --version >&2
echo "$tag"
