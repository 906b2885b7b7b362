#!/usr/bin/env bash
# A continuation is accepted in either of the kernel's forms and nothing else: closure.h's
# CLOSURE_FN_REF (_Generic) makes a function of any other type a compile error, not a silent cast.
# Likewise the workqueue: libclosure's own struct workqueue, a program's own struct
# workqueue_struct (the kernel's type, as bcachefs passes it), or NULL (CLOSURE_WQ_REF). Compiled
# with the errors GCC 14 makes of incompatible pointers and int-to-pointer conversions. With CXX,
# the same in C++ (closure.h's overloads), where a null pointer constant (NULL, 0, nullptr) is the
# only integer taken: C's _Generic takes any int as NULL, C++ refuses any other.
#   fn_forms_compile.sh CC INCLUDE_DIR CONFIG_INCLUDE_DIR [CXX]
set -uo pipefail
cc=$1 inc=$2 cfg=$3 cxx=${4:-}
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
scratch
compile() { # compile NAME BODY: 0 when it compiles
	printf '#include <stddef.h>\n#include <closure.h>\nstatic void old_fn(struct closure *cl) { (void)cl; }\nstatic CLOSURE_CALLBACK(new_fn) { closure_type(c, struct closure, work); (void)c; }\nvoid use(struct closure *cl, struct workqueue *own, struct workqueue_struct *prog);\nvoid use(struct closure *cl, struct workqueue *own, struct workqueue_struct *prog) { (void)old_fn; (void)new_fn; (void)own; (void)prog; %s; }\n' "$2" >"$tmp/$1.c"
	if [[ ${lang:-c} == c ]]; then
		"$cc" -std=gnu11 -Wall -Wextra -Werror -Werror=incompatible-pointer-types \
			-Werror=int-conversion -fsyntax-only -I"$inc" -I"$cfg" "$tmp/$1.c" 2>"$tmp/$1.err"
	else
		"$cxx" -x c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -I"$inc" -I"$cfg" \
			"$tmp/$1.c" 2>"$tmp/$1.err"
	fi
}
oks=('continue_at(cl, old_fn, NULL)' 'continue_at(cl, new_fn, NULL)' 'continue_at(cl, NULL, NULL)' \
	'set_closure_fn(cl, &new_fn, NULL)' 'closure_return_with_destructor(cl, old_fn)' \
	'closure_call(cl, new_fn, NULL, NULL)' 'continue_at_nobarrier(cl, old_fn, NULL)' \
	'closure_fn *f = new_fn; continue_at(cl, f, NULL)' \
	'continue_at(cl, new_fn, own)' 'continue_at(cl, new_fn, prog)' 'closure_call(cl, old_fn, prog, NULL)' \
	'continue_at_nobarrier(cl, new_fn, prog)' 'set_closure_fn(cl, new_fn, prog)' \
	'continue_at(cl, new_fn, 0)' 'closure_call(cl, new_fn, own, NULL)')
for ok in "${oks[@]}"; do
	compile ok "$ok" || fail "does not compile: $ok: $(cat "$tmp/ok.err")"
	echo "ok: compiles: $ok"
done
bads=('continue_at(cl, (void (*)(int))0, NULL)' 'continue_at(cl, (void (*)(void *))0, NULL)' \
	'continue_at(cl, (int *)0, NULL)' 'closure_return_with_destructor(cl, (void (*)(void))0)' \
	'continue_at(cl, new_fn, (int *)0)' 'continue_at(cl, new_fn, (struct closure *)0)' \
	'closure_call(cl, new_fn, (char *)0, NULL)')
for bad in "${bads[@]}"; do
	compile bad "$bad" && fail "compiles, but must not: $bad"
	grep -q '_Generic' "$tmp/bad.err" || fail "$bad: not refused by the _Generic: $(cat "$tmp/bad.err")"
	echo "ok: refused: $bad"
done
[[ -z $cxx ]] && exit 0
lang=c++
for ok in "${oks[@]}" 'continue_at(cl, old_fn, nullptr)' 'continue_at(cl, nullptr, 0)' \
	'closure_call(cl, 0, NULL, nullptr)'; do
	compile ok "$ok" || fail "C++: does not compile: $ok: $(cat "$tmp/ok.err")"
	echo "ok: C++: compiles: $ok"
done
for bad in "${bads[@]}" 'continue_at(cl, new_fn, 1)' 'int x = 0; continue_at(cl, new_fn, x)' \
	'continue_at(cl, 1, NULL)' 'continue_at(cl, new_fn, (void *)0)'; do
	compile bad "$bad" && fail "C++: compiles, but must not: $bad"
	grep -Eq 'closure_(fn|wq)_ref_(of|typed)' "$tmp/bad.err" ||
		fail "C++: $bad: not refused by closure.h's overloads: $(cat "$tmp/bad.err")"
	echo "ok: C++: refused: $bad"
done
