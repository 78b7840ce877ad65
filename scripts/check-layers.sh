#!/bin/sh
# Layer check: dependencies point one way, engine <- host <- api.
#
#   src/engine/  isa, core, maps, verifier, interp, jit, helpers, loader:
#                no per-process host state; includes only engine headers
#   src/host/    what is per-process by nature (text patching, traps and
#                signals, stacks, tracepoints, trampolines, kprobes, links):
#                includes engine and host headers
#   src/api/     the facade: may include anything below it
#   include/     the public headers: includable from every layer (they are
#                the types the layers implement), include nothing of src/
#
# Every quoted include of a file under src/ is resolved as the compiler does
# (the including file's directory first, then -Isrc/engine -Isrc/host
# -Isrc/api) and its layer compared with the includer's. Prints each include
# that points up a layer and exits 1 if there is one.
#
# With a build directory (scripts/check-layers.sh build), the objects are
# checked too: a function or variable an engine object refers to must not
# be defined by a host or api object, and one a host object refers to not
# by an api object (a call up through a public header's declaration has no
# include to catch). scripts/layers.pending
# lists the edges still being moved down ("FILE includes TARGET" lines);
# they are reported but not failed, and the file goes once it is empty.
cd "$(dirname "$0")/.." || exit 2
pending=scripts/layers.pending
rank() {
	case $1 in
	src/engine/*) echo 1 ;;
	src/host/*) echo 2 ;;
	src/api/*) echo 3 ;;
	include/*) echo 0 ;;
	*) echo 9 ;;
	esac
}
bad=0 n=0 np=0
for f in $(find src include -name '*.[ch]' | sort); do
	dir=$(dirname "$f")
	from=$(rank "$f")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		target=
		for base in "$dir" src/engine src/host src/api include; do
			if [ -f "$base/$inc" ]; then target="$base/$inc"; break; fi
		done
		[ -n "$target" ] || continue
		n=$((n + 1))
		to=$(rank "$target")
		if [ "$from" = 0 ] && [ "$to" != 0 ] || [ "$to" -gt "$from" ]; then
			if [ -f $pending ] && grep -qxF "$f includes $target" $pending; then
				echo "pending: $f includes $target"
				np=$((np + 1))
			else
				echo "layer violation: $f includes $target"
				bad=1
			fi
		fi
	done
done
build=$1
if [ -n "$build" ]; then
	[ -d "$build/src/engine" ] || { echo "no objects in $build/src/engine"; exit 2; }
	objects() { # the objects of layer $1 whose source still exists (a build
		# directory keeps the objects of files moved or deleted since)
		[ -d "$build/src/$1" ] || return 0
		find "$build/src/$1" -name '*.o' | sort | while read -r o; do
			s=${o#"$build"/}
			[ -f "${s%.o}.c" ] && echo "$o"
		done
	}
	defined() { # symbols defined by the objects of the layers given
		for d in "$@"; do
			objects "$d"
		done | xargs -r nm --defined-only 2>/dev/null |
			awk 'NF == 3 && $2 ~ /[TDBRVWSG]/ { print $3 }' | sort -u
	}
	up_refs() { # "symbol object" for each reference from layer $1 into $2...
		from=$1; shift
		defined "$@" >"$tmp.def"
		objects "$from" | while read -r o; do
			nm -u "$o" | awk -v o="$o" '{ print $NF, o }'
		done | sort | join - "$tmp.def"
	}
	tmp=$(mktemp); trap 'rm -f "$tmp" "$tmp.def"' EXIT
	{ up_refs engine host api; up_refs host api; } >"$tmp"
	while read -r sym obj; do
		echo "layer violation: $obj refers to $sym, defined a layer up"
		bad=1
	done <"$tmp"
	nobj=$({ objects engine; objects host; objects api; } | wc -l)
fi
if [ $bad = 0 ]; then
	msg="layers: $n includes${build:+ and $nobj objects} checked, none points up (engine <- host <- api)"
	[ $np = 0 ] || msg="$msg except $np pending in $pending"
	echo "$msg"
fi
exit $bad
