/*
 * opprof_disabled.h - opprof compiled out: with OPPROF_DISABLE defined
 * (and the library not being built), opprof.h and opprof_trace.h include
 * this at their ends, and every function they declare takes the form here:
 *   - the recording calls (begin, end, memory events, OPPROF_SCOPE) are
 *     empty expressions whose arguments are not evaluated beyond a cast to
 *     void; no session starts (opprof_start gives OPPROF_E_UNSUPPORTED,
 *     opprof_stop hands out NULL);
 *   - every other function is a static inline one of the same name
 *     (a macro names it, so it can be called or taken as a pointer, e.g.
 *     opprof_trace_handler_ready as on_trace_ready): what reads a trace finds
 *     none (0 events, NULL, OPPROF_E_UNSUPPORTED), the _init functions set
 *     up their structs as the library would, opprof_config_from_env says
 *     profiling is off.
 * So a program instrumented for opprof builds and links without the
 * library and pays nothing, as TRACY_ENABLE does for Tracy. Do not include
 * it yourself.
 */
#if defined(OPPROF_H) && !defined(OPPROF_DISABLED_RECORDING_)
#define OPPROF_DISABLED_RECORDING_
#undef opprof_begin
#undef opprof_begin_inputs
#undef opprof_end
#undef opprof_end_flops
#undef opprof_begin_args
#undef opprof_begin_inputs_args
#undef opprof_end_args
#undef opprof_record_memory
#undef opprof_record_alloc
#undef opprof_record_free
#undef OPPROF_SCOPE
/* Results come from calls, so that a call made as a statement (the usual
 * opprof_end(&site);) is not a "statement with no effect". */
static inline int opprof_disabled_status_(int status) { return status; }
static inline const opprof_site *opprof_disabled_site_(void) { return (const opprof_site *)0; }
#define opprof_begin(s) ((void)(s))
#define opprof_begin_inputs(s, in, n) ((void)(s), (void)(in), (void)(n))
#define opprof_end(s) ((void)(s), opprof_disabled_status_(OPPROF_OK))
#define opprof_end_flops(s, f) ((void)(s), (void)(f), opprof_disabled_status_(OPPROF_OK))
#define opprof_begin_args(s, a, n) ((void)(s), (void)(a), (void)(n))
#define opprof_begin_inputs_args(s, in, nin, a, n) ((void)(s), (void)(in), (void)(nin), (void)(a), (void)(n))
#define opprof_end_args(s, a, n) ((void)(s), (void)(a), (void)(n), opprof_disabled_status_(OPPROF_OK))
#define opprof_annotation_begin(name) ((void)(name), opprof_disabled_site_())
#define opprof_record_memory(a, b) ((void)(a), (void)(b))
#define opprof_record_alloc(a, b) ((void)(a), (void)(b))
#define opprof_record_free(a) ((void)(a))
#define opprof_record_realloc(o, n, b) ((void)(o), (void)(n), (void)(b))
#define OPPROF_SCOPE(name_) ((void)0)
static inline int opprof_disabled_stop_(opprof_trace **out)
{
    if (out) *out = (opprof_trace *)0;
    return OPPROF_E_NO_SESSION;
}
#define opprof_start(cfg) ((void)(cfg), opprof_disabled_status_(OPPROF_E_UNSUPPORTED))
#define opprof_stop(out) opprof_disabled_stop_(out)
#define opprof_sample_thread() opprof_disabled_status_(OPPROF_OK)
#define opprof_stop_incomplete(out) opprof_disabled_stop_(out)
#define opprof_step() opprof_disabled_status_(OPPROF_E_NO_SESSION)
#define opprof_is_active() opprof_disabled_status_(0)
#define opprof_step_num() ((int64_t)opprof_disabled_status_(-1))

/* An empty initializer in either language, without -Wextra's complaints. */
#ifdef __cplusplus
#define OPPROF_DISABLED_ZERO_ {}
#else
#define OPPROF_DISABLED_ZERO_ {0}
#endif

/* Sections 1-3 and 6 of opprof.h. Parameters go unused on purpose. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
static inline const char *opprof_strerror_disabled_(int status)
    { return status == OPPROF_OK ? "ok" : "opprof is compiled out (OPPROF_DISABLE)"; }
#define opprof_strerror opprof_strerror_disabled_
static inline const char *opprof_version_disabled_(void) { return OPPROF_VERSION_STRING "-disabled"; }
#define opprof_version opprof_version_disabled_
static inline const char *opprof_last_error_disabled_(void) { return ""; }
#define opprof_last_error opprof_last_error_disabled_
static inline const char *opprof_category_name_disabled_(int category) { return ""; }
#define opprof_category_name opprof_category_name_disabled_
static inline const char *opprof_dtype_name_disabled_(int dtype) { return ""; }
#define opprof_dtype_name opprof_dtype_name_disabled_
static inline const opprof_site *opprof_intern_disabled_(const char *name, int category)
    { return (const opprof_site *)0; }
#define opprof_intern opprof_intern_disabled_
static inline opprof_action opprof_schedule_action_disabled_(const opprof_schedule *s, int64_t step)
    { return OPPROF_ACTION_NONE; }
#define opprof_schedule_action opprof_schedule_action_disabled_
static inline int opprof_schedule_check_disabled_(const opprof_schedule *s) { return OPPROF_E_UNSUPPORTED; }
#define opprof_schedule_check opprof_schedule_check_disabled_
static inline int opprof_schedule_parse_disabled_(const char *text, opprof_schedule *out)
    { if (out) out->enabled = 0; return OPPROF_E_UNSUPPORTED; }
#define opprof_schedule_parse opprof_schedule_parse_disabled_
static inline int opprof_schedule_format_disabled_(const opprof_schedule *s, char *buf, size_t size)
    { if (buf && size) buf[0] = '\0'; return 0; }
#define opprof_schedule_format opprof_schedule_format_disabled_
static inline int opprof_config_init_size_disabled_(opprof_config *cfg, size_t struct_size)
{
    if (cfg) {
        static const opprof_config zero = OPPROF_DISABLED_ZERO_;
        *cfg = zero;
        cfg->struct_size = struct_size;
    }
    return OPPROF_OK;
}
#define opprof_config_init_size opprof_config_init_size_disabled_
static inline void opprof_trace_free_disabled_(opprof_trace *t) {}
#define opprof_trace_free opprof_trace_free_disabled_
static inline int opprof_cuda_device_count_disabled_(void) { return OPPROF_E_UNSUPPORTED; }
#define opprof_cuda_device_count opprof_cuda_device_count_disabled_
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif
#define opprof_config_init(cfg) ((void)opprof_config_init_size_disabled_((cfg), sizeof *(cfg)))
#endif

#if defined(OPPROF_DISABLED_TRACE_PART_) && !defined(OPPROF_DISABLED_TRACE_)
#define OPPROF_DISABLED_TRACE_
/* opprof_trace.h, sections 7-15. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
static inline size_t opprof_trace_event_count_disabled_(const opprof_trace *t) { return 0; }
#define opprof_trace_event_count opprof_trace_event_count_disabled_
static inline int opprof_trace_event_disabled_(const opprof_trace *t, size_t i, opprof_event *out)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_event opprof_trace_event_disabled_
static inline uint64_t opprof_trace_aggregated_disabled_(const opprof_trace *t) { return 0; }
#define opprof_trace_aggregated opprof_trace_aggregated_disabled_
static inline int opprof_trace_streamed_disabled_(const opprof_trace *t) { return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_streamed opprof_trace_streamed_disabled_
static inline int opprof_trace_overhead_compensation_disabled_(const opprof_trace *t, double *inside_ns,
    double *outside_ns)
    { if (inside_ns) *inside_ns = 0; if (outside_ns) *outside_ns = 0; return 0; }
#define opprof_trace_overhead_compensation opprof_trace_overhead_compensation_disabled_
static inline uint64_t opprof_trace_dropped_disabled_(const opprof_trace *t) { return 0; }
#define opprof_trace_dropped opprof_trace_dropped_disabled_
static inline size_t opprof_trace_top_calls_disabled_(const opprof_trace *t, size_t n, const char **names,
    uint64_t *calls)
    { return 0; }
#define opprof_trace_top_calls opprof_trace_top_calls_disabled_
static inline int opprof_trace_drop_note_disabled_(const opprof_trace *t, const char *who, const char *max_option,
    const char *exclude_option, FILE *f)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_drop_note opprof_trace_drop_note_disabled_
static inline size_t opprof_trace_sample_count_disabled_(const opprof_trace *t) { return 0; }
#define opprof_trace_sample_count opprof_trace_sample_count_disabled_
static inline int64_t opprof_trace_sample_period_ns_disabled_(const opprof_trace *t) { return 0; }
#define opprof_trace_sample_period_ns opprof_trace_sample_period_ns_disabled_
static inline int opprof_trace_functions_disabled_(const opprof_trace *t, const char *threads, const char *within,
    opprof_trace **out)
    { if (out) *out = (opprof_trace *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_functions opprof_trace_functions_disabled_
static inline int opprof_trace_sample_note_disabled_(const opprof_trace *t, const char *who, FILE *f)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_sample_note opprof_trace_sample_note_disabled_
static inline int opprof_trace_incomplete_disabled_(const opprof_trace *t) { return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_incomplete opprof_trace_incomplete_disabled_
static inline int64_t opprof_trace_base_time_ns_disabled_(const opprof_trace *t) { return 0; }
#define opprof_trace_base_time_ns opprof_trace_base_time_ns_disabled_
static inline int64_t opprof_trace_step_num_disabled_(const opprof_trace *t) { return -1; }
#define opprof_trace_step_num opprof_trace_step_num_disabled_
static inline int opprof_trace_memory_stats_disabled_(const opprof_trace *t, opprof_memory_stats *out)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_memory_stats opprof_trace_memory_stats_disabled_
static inline int opprof_memory_timeline_write_disabled_(const opprof_trace *t, FILE *f, int format)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_memory_timeline_write opprof_memory_timeline_write_disabled_
static inline int opprof_key_averages_new_disabled_(const opprof_trace *t, const opprof_avg_options *opt,
    opprof_key_averages **out)
    { if (out) *out = (opprof_key_averages *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_key_averages_new opprof_key_averages_new_disabled_
static inline int opprof_key_averages_sort_disabled_(opprof_key_averages *ka, const char *sort_by)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_key_averages_sort opprof_key_averages_sort_disabled_
static inline size_t opprof_key_averages_count_disabled_(const opprof_key_averages *ka) { return 0; }
#define opprof_key_averages_count opprof_key_averages_count_disabled_
static inline int opprof_key_averages_row_disabled_(const opprof_key_averages *ka, size_t i, opprof_avg_row *out)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_key_averages_row opprof_key_averages_row_disabled_
static inline void opprof_key_averages_free_disabled_(opprof_key_averages *ka) {}
#define opprof_key_averages_free opprof_key_averages_free_disabled_
static inline size_t opprof_escape_name_disabled_(const char *name, char *out, size_t cap)
    { if (out && cap) out[0] = '\0'; return 0; }
#define opprof_escape_name opprof_escape_name_disabled_
static inline int opprof_write_csv_field_disabled_(FILE *f, const char *s) { return 0; }
#define opprof_write_csv_field opprof_write_csv_field_disabled_
static inline int opprof_write_json_string_disabled_(FILE *f, const char *s) { return 0; }
#define opprof_write_json_string opprof_write_json_string_disabled_
static inline int opprof_table_write_disabled_(const opprof_key_averages *ka, const char *sort_by, int row_limit,
    FILE *f)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_table_write opprof_table_write_disabled_
static inline int opprof_table_write_columns_disabled_(const opprof_key_averages *ka, const char *sort_by,
    int row_limit, unsigned columns, FILE *f)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_table_write_columns opprof_table_write_columns_disabled_
static inline int opprof_key_averages_oncpu_disabled_(const opprof_key_averages *ka, size_t i, int64_t *oncpu_total_ns,
    int64_t *self_oncpu_ns)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_key_averages_oncpu opprof_key_averages_oncpu_disabled_
static inline int opprof_table_string_disabled_(const opprof_key_averages *ka, const char *sort_by, int row_limit,
    char **out)
    { if (out) *out = (char *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_table_string opprof_table_string_disabled_
static inline int opprof_key_averages_write_csv_disabled_(const opprof_key_averages *ka, FILE *f)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_key_averages_write_csv opprof_key_averages_write_csv_disabled_
static inline int opprof_key_averages_write_json_disabled_(const opprof_key_averages *ka, FILE *f)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_key_averages_write_json opprof_key_averages_write_json_disabled_
static inline int opprof_export_options_init_size_disabled_(opprof_export_options *o, size_t struct_size)
{
    if (o) {
        static const opprof_export_options zero = OPPROF_DISABLED_ZERO_;
        *o = zero;
        o->struct_size = struct_size;
        o->gzip = -1;
        o->gzip_level = 1;
        o->fsync = 1;
        o->rank = -1;
        o->world_size = -1;
    }
    return OPPROF_OK;
}
#define opprof_export_options_init_size opprof_export_options_init_size_disabled_
static inline int opprof_export_chrome_trace_disabled_(const opprof_trace *t, const char *path)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_export_chrome_trace opprof_export_chrome_trace_disabled_
static inline int opprof_export_chrome_trace_ex_disabled_(const opprof_trace *t, const char *path,
    const opprof_export_options *o)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_export_chrome_trace_ex opprof_export_chrome_trace_ex_disabled_
static inline int opprof_export_chrome_trace_stream_disabled_(const opprof_trace *t, FILE *f,
    const opprof_export_options *o)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_export_chrome_trace_stream opprof_export_chrome_trace_stream_disabled_
static inline int opprof_trace_convert_disabled_(const char *in, const char *out, const opprof_export_options *o)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_convert opprof_trace_convert_disabled_
static inline int opprof_write_file_disabled_(const char *path, opprof_write_fn write_fn, void *ctx)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_write_file opprof_write_file_disabled_
static inline int opprof_trace_handler_init_size_disabled_(opprof_trace_handler *h, size_t struct_size,
    const char *dir, const char *worker, int use_gzip)
{
    if (h) {
        static const opprof_trace_handler zero = OPPROF_DISABLED_ZERO_;
        *h = zero;
        h->struct_size = struct_size;
        h->row_limit = 100;
    }
    return OPPROF_OK;
}
#define opprof_trace_handler_init_size opprof_trace_handler_init_size_disabled_
static inline void opprof_trace_handler_ready_disabled_(const opprof_trace *trace, void *handler) {}
#define opprof_trace_handler_ready opprof_trace_handler_ready_disabled_
static inline int opprof_trace_handler_status_disabled_(const opprof_trace_handler *h) { return OPPROF_OK; }
#define opprof_trace_handler_status opprof_trace_handler_status_disabled_
static inline const char *opprof_trace_handler_last_error_disabled_(const opprof_trace_handler *h) { return ""; }
#define opprof_trace_handler_last_error opprof_trace_handler_last_error_disabled_
static inline const char *opprof_trace_handler_last_path_disabled_(const opprof_trace_handler *h) { return ""; }
#define opprof_trace_handler_last_path opprof_trace_handler_last_path_disabled_
static inline unsigned opprof_trace_handler_traces_written_disabled_(const opprof_trace_handler *h) { return 0; }
#define opprof_trace_handler_traces_written opprof_trace_handler_traces_written_disabled_
static inline int opprof_trace_load_disabled_(const char *path, opprof_trace **out)
    { if (out) *out = (opprof_trace *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_load opprof_trace_load_disabled_
static inline int opprof_trace_load_buffer_disabled_(const void *buf, size_t len, opprof_trace **out)
    { if (out) *out = (opprof_trace *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_load_buffer opprof_trace_load_buffer_disabled_
static inline int opprof_trace_load_max_disabled_(const char *path, uint64_t max_events, opprof_trace **out)
    { if (out) *out = (opprof_trace *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_load_max opprof_trace_load_max_disabled_
static inline int opprof_trace_load_table_disabled_(const char *path, uint64_t max_events,
    const opprof_avg_options *opt, opprof_trace **out)
    { if (out) *out = (opprof_trace *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_trace_load_table opprof_trace_load_table_disabled_
static inline int opprof_config_from_env_size_disabled_(opprof_config *cfg, size_t cfg_size, opprof_env *env,
    size_t env_size)
{
    opprof_config_init_size_disabled_(cfg, cfg_size);
    if (env) {
        static const opprof_env zero = OPPROF_DISABLED_ZERO_;
        *env = zero;
        env->rank = -1;
    }
    return OPPROF_OK;
}
#define opprof_config_from_env_size opprof_config_from_env_size_disabled_
static inline int opprof_calibrate_overhead_disabled_(const opprof_config *cfg, void (*call)(void *ctx),
    void (*bare)(void *ctx), void *ctx, double *inside_ns, double *outside_ns)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_calibrate_overhead opprof_calibrate_overhead_disabled_
static inline int opprof_config_from_string_size_disabled_(opprof_config *cfg, size_t cfg_size, opprof_env *env,
    size_t env_size, const char *settings)
    { return opprof_config_from_env_size_disabled_(cfg, cfg_size, env, env_size); }
#define opprof_config_from_string_size opprof_config_from_string_size_disabled_
static inline int opprof_report_write_disabled_(const opprof_trace *a, const opprof_trace *b,
    const opprof_report_options *opt, const char *path)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_report_write opprof_report_write_disabled_
static inline unsigned opprof_trace_event_stack_depth_disabled_(const opprof_trace *t, size_t i) { return 0; }
#define opprof_trace_event_stack_depth opprof_trace_event_stack_depth_disabled_
static inline const char *opprof_trace_event_frame_disabled_(const opprof_trace *t, size_t i, unsigned k)
    { return (const char *)0; }
#define opprof_trace_event_frame opprof_trace_event_frame_disabled_
static inline int opprof_export_stacks_disabled_(const opprof_trace *t, const char *path, const char *metric)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_export_stacks opprof_export_stacks_disabled_
static inline int opprof_write_stacks_disabled_(const opprof_trace *t, FILE *f, const char *metric, int frames)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_write_stacks opprof_write_stacks_disabled_
static inline const opprof_site *opprof_function_site_disabled_(const void *fn) { return (const opprof_site *)0; }
#define opprof_function_site opprof_function_site_disabled_
static inline int opprof_function_exclude_disabled_(const char *patterns) { return OPPROF_E_UNSUPPORTED; }
#define opprof_function_exclude opprof_function_exclude_disabled_
static inline int opprof_stack_inline_disabled_(int on) { return OPPROF_E_UNSUPPORTED; }
#define opprof_stack_inline opprof_stack_inline_disabled_
static inline int opprof_stack_separate_debuginfo_disabled_(int on) { return OPPROF_E_UNSUPPORTED; }
#define opprof_stack_separate_debuginfo opprof_stack_separate_debuginfo_disabled_
static inline void opprof_distributed_info_init_disabled_(opprof_distributed_info *d)
    { if (d) { static const opprof_distributed_info zero = OPPROF_DISABLED_ZERO_; *d = zero; d->rank = -1; d->world_size = -1; } }
#define opprof_distributed_info_init opprof_distributed_info_init_disabled_
static inline int opprof_set_distributed_info_disabled_(const opprof_distributed_info *d)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_set_distributed_info opprof_set_distributed_info_disabled_
static inline int opprof_get_distributed_info_disabled_(opprof_distributed_info *out)
    { opprof_distributed_info_init_disabled_(out); return OPPROF_E_UNSUPPORTED; }
#define opprof_get_distributed_info opprof_get_distributed_info_disabled_
static inline int opprof_trace_distributed_info_disabled_(const opprof_trace *t, opprof_distributed_info *out)
    { opprof_distributed_info_init_disabled_(out); return OPPROF_E_NOT_FOUND; }
#define opprof_trace_distributed_info opprof_trace_distributed_info_disabled_
static inline int64_t opprof_clock_offset_at_disabled_(const opprof_distributed_info *d, int64_t wall_ns) { return 0; }
#define opprof_clock_offset_at opprof_clock_offset_at_disabled_
static inline int opprof_ranks_merge_disabled_(const opprof_trace *const *traces, size_t n, opprof_trace **out)
    { if (out) *out = (opprof_trace *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_ranks_merge opprof_ranks_merge_disabled_
static inline int opprof_ranks_report_new_disabled_(const opprof_trace *const *traces, size_t n,
    opprof_ranks_report **out)
    { if (out) *out = (opprof_ranks_report *)0; return OPPROF_E_UNSUPPORTED; }
#define opprof_ranks_report_new opprof_ranks_report_new_disabled_
static inline void opprof_ranks_report_free_disabled_(opprof_ranks_report *r) {}
#define opprof_ranks_report_free opprof_ranks_report_free_disabled_
static inline size_t opprof_ranks_report_rank_count_disabled_(const opprof_ranks_report *r) { return 0; }
#define opprof_ranks_report_rank_count opprof_ranks_report_rank_count_disabled_
static inline int opprof_ranks_report_rank_disabled_(const opprof_ranks_report *r, size_t i, opprof_rank_stats *out)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_ranks_report_rank opprof_ranks_report_rank_disabled_
static inline size_t opprof_ranks_report_collective_count_disabled_(const opprof_ranks_report *r) { return 0; }
#define opprof_ranks_report_collective_count opprof_ranks_report_collective_count_disabled_
static inline int opprof_ranks_report_collective_disabled_(const opprof_ranks_report *r, size_t i,
    opprof_collective_stats *out)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_ranks_report_collective opprof_ranks_report_collective_disabled_
static inline int64_t opprof_ranks_report_wait_ns_disabled_(const opprof_ranks_report *r, size_t i, size_t k)
    { return -1; }
#define opprof_ranks_report_wait_ns opprof_ranks_report_wait_ns_disabled_
static inline size_t opprof_ranks_report_op_count_disabled_(const opprof_ranks_report *r) { return 0; }
#define opprof_ranks_report_op_count opprof_ranks_report_op_count_disabled_
static inline int opprof_ranks_report_op_disabled_(const opprof_ranks_report *r, size_t i, opprof_rank_op_stats *out)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_ranks_report_op opprof_ranks_report_op_disabled_
static inline int opprof_ranks_report_write_disabled_(const opprof_ranks_report *r, FILE *f, int format, int row_limit)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_ranks_report_write opprof_ranks_report_write_disabled_
static inline int opprof_on_demand_start_disabled_(const opprof_config *cfg) { return OPPROF_E_UNSUPPORTED; }
#define opprof_on_demand_start opprof_on_demand_start_disabled_
static inline int opprof_on_demand_stop_disabled_(void) { return OPPROF_OK; }
#define opprof_on_demand_stop opprof_on_demand_stop_disabled_
static inline void opprof_trigger_request_init_disabled_(opprof_trigger_request *r)
    { if (r) { static const opprof_trigger_request zero = OPPROF_DISABLED_ZERO_; *r = zero; } }
#define opprof_trigger_request_init opprof_trigger_request_init_disabled_
static inline int opprof_trigger_disabled_(int64_t pid, const opprof_trigger_request *r, FILE *out)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_trigger opprof_trigger_disabled_
static inline int opprof_trigger_list_disabled_(FILE *out) { return OPPROF_E_UNSUPPORTED; }
#define opprof_trigger_list opprof_trigger_list_disabled_
static inline int opprof_flight_config_init_size_disabled_(opprof_flight_config *c, size_t struct_size)
{
    if (c) {
        static const opprof_flight_config zero = OPPROF_DISABLED_ZERO_;
        *c = zero;
        opprof_config_init_size_disabled_(&c->session, sizeof c->session);
    }
    return OPPROF_OK;
}
#define opprof_flight_config_init_size opprof_flight_config_init_size_disabled_
static inline int opprof_flight_start_disabled_(const opprof_flight_config *c) { return OPPROF_E_UNSUPPORTED; }
#define opprof_flight_start opprof_flight_start_disabled_
static inline int opprof_flight_dump_disabled_(const char *path) { return OPPROF_E_UNSUPPORTED; }
#define opprof_flight_dump opprof_flight_dump_disabled_
static inline int opprof_flight_dump_async_disabled_(void) { return OPPROF_E_UNSUPPORTED; }
#define opprof_flight_dump_async opprof_flight_dump_async_disabled_
static inline uint64_t opprof_flight_dumps_disabled_(void) { return 0; }
#define opprof_flight_dumps opprof_flight_dumps_disabled_
static inline int opprof_flight_stop_disabled_(void) { return OPPROF_E_NO_SESSION; }
#define opprof_flight_stop opprof_flight_stop_disabled_
static inline int opprof_parse_size_disabled_(const char *text, size_t *bytes) { return OPPROF_E_UNSUPPORTED; }
#define opprof_parse_size opprof_parse_size_disabled_
static inline int opprof_parse_slow_step_disabled_(const char *text, int64_t *ns, double *ratio)
    { return OPPROF_E_UNSUPPORTED; }
#define opprof_parse_slow_step opprof_parse_slow_step_disabled_
static inline int opprof_parse_duration_disabled_(const char *text, int64_t *ns) { return OPPROF_E_UNSUPPORTED; }
#define opprof_parse_duration opprof_parse_duration_disabled_
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif
/* Its inline set-ups, which would call the library's _size forms. */
#define opprof_export_options_init(o) ((void)opprof_export_options_init_size_disabled_((o), sizeof *(o)))
#define opprof_trace_handler_init(h, dir, worker, gz)                                                          \
    opprof_trace_handler_init_size_disabled_((h), sizeof *(h), (dir), (worker), (gz))
#define opprof_config_from_env(cfg, env)                                                                       \
    opprof_config_from_env_size_disabled_((cfg), sizeof *(cfg), (env), sizeof *(env))
#define opprof_config_from_string(cfg, env, s)                                                                 \
    opprof_config_from_string_size_disabled_((cfg), sizeof *(cfg), (env), sizeof *(env), (s))
#define opprof_flight_config_init(c) ((void)opprof_flight_config_init_size_disabled_((c), sizeof *(c)))
#endif
