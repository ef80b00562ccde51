// The lineage database (SQLite): a connection and prepared statements whose failures are
// trail::Errors.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace trail::corpus {

class Db {
 public:
  explicit Db(const std::string& path) {
    TRAIL_CHECK(sqlite3_open(path.c_str(), &db_) == SQLITE_OK, path,
                ": cannot open: ", sqlite3_errmsg(db_));
  }
  ~Db() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    TRAIL_CHECK(rc == SQLITE_OK, "lineage: ", msg, " in: ", sql.substr(0, 80));
  }
  sqlite3* get() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) {
    TRAIL_CHECK(sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) == SQLITE_OK,
                "lineage: ", sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt& Text(int i, const std::string& s) {
    sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // The string must stay unchanged until Run(): SQLite reads it there instead of copying it.
  // An empty view binds '' (SQLite reads a null pointer as NULL).
  Stmt& TextUntilRun(int i, std::string_view s) {
    sqlite3_bind_text(st_, i, s.empty() ? "" : s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
    return *this;
  }
  Stmt& Int(int i, int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  Stmt& Real(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
  }
  void Run() {
    TRAIL_CHECK(sqlite3_step(st_) == SQLITE_DONE, "lineage insert failed");
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
  }
  sqlite3_stmt* get() { return st_; }

 private:
  sqlite3_stmt* st_ = nullptr;
};

}  // namespace trail::corpus
