# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# down(200) three times from main(): 600 calls of down, nested 200 deep,
# far past the kernel's 64 pending return probes (Python calls take none).
def down(n):
    if n > 1:
        down(n - 1)


def main():
    for _ in range(3):
        down(200)


main()
