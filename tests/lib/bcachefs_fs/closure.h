/*
 * A header shaped like the newest bcachefs-tools' fs/closure.h (v1.39): it includes the closures
 * (its fs/vendor/closure.h, which a build on libclosure reduces to the line below) and then spells
 * four names as bcachefs exports them. Included after <closure.h>, it must compile without a
 * warning, and calls through these names must keep their callers' lines (bcachefs_names.c).
 */
#include <closure/closure.h>

#define closure_wait	       bch2_closure_wait
#define closure_return_sync    bch2_closure_return_sync
#define __closure_wake_up      __bch2_closure_wake_up
#define closure_sync_unbounded bch2_closure_sync_unbounded
