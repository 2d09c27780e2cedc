#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# scripts/check-layers.sh passes on the tree as it is, and fails on an upward
# include, a private header or a record read outside decode/ planted in a
# copy of it (make unit).
CHECK=check-layers.sh
COPY="user exporters"
source "$(dirname "$0")/tree_check.sh"

fresh
check 0 "the tree as it is"

# archive/ may not include report/ (report reads through the archive's replay loop)
fresh
sed -i '0,/#include "archive.h"/s//#include "archive.h"\n#include "report\/report.h"/' \
	"$tmp/tree/user/archive/replay.c"
check 1 "planted upward include" 'archive may not include report/report.h'

# base/ is the ground: it includes no layer
fresh
echo '#include "model/session.h"' >> "$tmp/tree/user/base/util.h"
check 1 "base includes model" 'base may not include model/session.h'

# a folder's internal.h is its own
fresh
echo '#include "decode/internal.h"' >> "$tmp/tree/user/capture/capture.c"
check 1 "another folder's internal.h" 'includes decode/internal.h, private to decode/'

# the record format is decode's to read
fresh
printf 'static int f(const struct bp_rec_hdr *h) { return h->type == BP_REC_EXEC; }\n' \
	>> "$tmp/tree/user/capture/capture.c"
check 1 "a record read outside decode/" 'capture reads the record format'

# a folder that is not in the matrix
fresh
mkdir "$tmp/tree/user/newlayer" && echo 'int x;' > "$tmp/tree/user/newlayer/x.c"
check 1 "a folder without a row" "folder 'newlayer' has no row"

[ "$fails" = 0 ] && echo "test_check_layers: ok"
exit $((fails > 0))
