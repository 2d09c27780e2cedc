# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sqlite3 work only inside setup() and query(): every sqlite3_step runs in one.
import sqlite3


def setup():
    db = sqlite3.connect(":memory:")
    db.execute("create table t (x integer)")
    db.executemany("insert into t values (?)", [(i,) for i in range(10)])
    return db


def query(db, i):
    return db.execute("select x from t where x = ?", (i,)).fetchall()


db = setup()
print(sum(len(query(db, i)) for i in range(5)))
db.close()
