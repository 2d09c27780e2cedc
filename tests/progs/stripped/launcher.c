/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * launcher: an executable with almost nothing of its own (like git's or
 * python's, whose work is in shared libraries): main() only, which calls
 * strip_lib_run(7) in libstripdemo.so.  Exits 0 when that returns 42.
 */
int strip_lib_run(int n);

int main(void)
{
	return strip_lib_run(7) == 42 ? 0 : 1;
}
