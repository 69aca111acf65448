// kiln_tuning_db_*: the tuning database by hand (what `kiln cache` does):
// list, export, import.
#include "capi/handles.hpp"

#include <kiln/tune/autotune_config.hpp>

#include <algorithm>
#include <cstring>

using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;

extern "C" {

kiln_status_t* kiln_tuning_db_open(const kiln_runtime_t* runtime, const char* path, kiln_tuning_db_t** out) {
  constexpr const char* f = "kiln_tuning_db_open";
  return guard(f, [&]() -> kiln_status_t* {
    if (out == nullptr) return null_argument(f, "out");
    std::filesystem::path file;
    if (path != nullptr && *path != '\0') file = path;
    else if (runtime == nullptr) return null_argument(f, "runtime (needed when path is NULL)");
    else file = runtime->config->tuning_db.empty() ? kiln::tune::default_tuning_db_path() : runtime->config->tuning_db;
    kiln::Result<kiln::tune::TuningDb> db = kiln::tune::TuningDb::open(file);
    if (!db) return make_status(db.error());
    *out = new kiln_tuning_db_t{std::move(db).value(), file.string(), {}};
    return nullptr;
  });
}

void kiln_tuning_db_free(kiln_tuning_db_t* db) { delete db; }

const char* kiln_tuning_db_path(const kiln_tuning_db_t* db) { return db ? db->path.c_str() : nullptr; }

kiln_status_t* kiln_tuning_db_list(kiln_tuning_db_t* db, size_t* count) {
  constexpr const char* f = "kiln_tuning_db_list";
  return guard(f, [&]() -> kiln_status_t* {
    if (db == nullptr) return null_argument(f, "db");
    if (count == nullptr) return null_argument(f, "count");
    kiln::Result<std::vector<kiln::tune::TuningEntry>> entries = db->db.list();
    if (!entries) return make_status(entries.error());
    db->listed = std::move(entries).value();
    *count = db->listed.size();
    return nullptr;
  });
}

kiln_status_t* kiln_tuning_db_entry(const kiln_tuning_db_t* db, size_t index, kiln_tuning_entry_t* entry) {
  constexpr const char* f = "kiln_tuning_db_entry";
  return guard(f, [&]() -> kiln_status_t* {
    if (db == nullptr) return null_argument(f, "db");
    if (kiln_status_t* s = kiln::capi::check_struct(f, entry, entry ? entry->struct_size : 0,
                                                    KILN_STRUCT_SIZE(kiln_tuning_entry_t, id)))
      return s;
    if (index >= db->listed.size())
      return make_status(KILN_CODE_INVALID_ARGUMENT, std::string(f) + ": index " + std::to_string(index) + " of " +
                                                         std::to_string(db->listed.size()) +
                                                         " entries listed (kiln_tuning_db_list first)");
    const kiln::tune::TuningEntry& e = db->listed[index];
    kiln_tuning_entry_t full{};
    full.struct_size = entry->struct_size;
    full.id = e.id;
    full.kernel_hash = e.key.kernel_hash.c_str();
    full.kernel_name = e.kernel_name.c_str();
    full.device_id = e.device_id.c_str();
    full.device_name = e.device_name.c_str();
    full.sequence = e.sequence.c_str();
    full.best_ns = e.best_ns;
    full.baseline_ns = e.baseline_ns;
    full.candidates_measured = e.candidates_measured;
    std::memcpy(entry, &full, std::min(entry->struct_size, sizeof full));
    return nullptr;
  });
}

kiln_status_t* kiln_tuning_db_export(kiln_tuning_db_t* db, char** json) {
  constexpr const char* f = "kiln_tuning_db_export";
  return guard(f, [&]() -> kiln_status_t* {
    if (db == nullptr) return null_argument(f, "db");
    if (json == nullptr) return null_argument(f, "json");
    kiln::Result<std::vector<kiln::tune::TuningEntry>> entries = db->db.list(true);
    if (!entries) return make_status(entries.error());
    *json = kiln::capi::copy_string(kiln::tune::entries_to_json(*entries));
    return nullptr;
  });
}

kiln_status_t* kiln_tuning_db_import(kiln_tuning_db_t* db, const char* json, size_t len, size_t* imported) {
  constexpr const char* f = "kiln_tuning_db_import";
  return guard(f, [&]() -> kiln_status_t* {
    if (db == nullptr) return null_argument(f, "db");
    if (json == nullptr && len > 0) return null_argument(f, "json");
    kiln::Result<std::vector<kiln::tune::TuningEntry>> entries =
        kiln::tune::entries_from_json(std::string_view(json ? json : "", len), "<import text>");
    if (!entries) return make_status(entries.error());
    for (const kiln::tune::TuningEntry& e : *entries)
      if (kiln::Result<std::int64_t> stored = db->db.store(e); !stored) return make_status(stored.error());
    if (imported != nullptr) *imported = entries->size();
    return nullptr;
  });
}

}  // extern "C"
