"""The names of fio's job options, as fio-3.33 lists them (generated: do not edit).

Regenerate with ``scripts/fio-option-names > benchtui/plan/fio_option_names.py``: it reads
``fio --cmdhelp=all``, ``fio --cmdhelp=OPTION`` (alias, type) and ``fio --enghelp=ENGINE``.
A plan's ``matrix`` keys are checked against these names.
"""

from __future__ import annotations

from typing import Final

#: The fio version the names were read from.
FIO_VERSION: Final = "fio-3.33"
#: Every job option of fio itself.
GENERAL_OPTIONS: Final = frozenset({
    "allow_file_create", "allow_mounted_write", "allrandrepeat", "atomic", "ba",
    "block_error_percentiles", "bs", "bs_unaligned", "bsrange", "bssplit",
    "buffer_compress_chunk", "buffer_compress_percentage", "buffer_pattern", "buffered",
    "bwavgtime", "cgroup", "cgroup_nodelete", "cgroup_weight", "clat_percentiles",
    "clocksource", "continue_on_error", "cpumask", "cpus_allowed", "cpus_allowed_policy",
    "create_fsync", "create_on_open", "create_only", "create_serialize", "dedupe_global",
    "dedupe_mode", "dedupe_percentage", "dedupe_working_set_percentage", "description",
    "direct", "directory", "disable_bw_measurement", "disable_clat", "disable_lat",
    "disable_slat", "disk_util", "do_verify", "end_fsync", "error_dump", "exec_postrun",
    "exec_prerun", "exit_what", "exitall", "exitall_on_error", "experimental_verify",
    "fadvise_hint", "fallocate", "fdatasync", "file_append", "file_service_type", "filename",
    "filename_format", "filesize", "fill_device", "flow", "flow_id", "flow_sleep", "fsync",
    "fsync_on_close", "gid", "group_reporting", "gtod_cpu", "gtod_reduce", "hugepage-size",
    "ignore_error", "ignore_zone_limits", "invalidate", "io_size", "io_submit_mode", "iodepth",
    "iodepth_batch", "iodepth_batch_complete_max", "iodepth_batch_complete_min", "iodepth_low",
    "ioengine", "iopsavgtime", "ioscheduler", "job_max_open_zones", "kb_base",
    "lat_percentiles", "latency_percentile", "latency_run", "latency_target", "latency_window",
    "lockfile", "lockmem", "log_alternate_epoch", "log_alternate_epoch_clock_id",
    "log_avg_msec", "log_compression", "log_compression_cpus", "log_entries",
    "log_hist_coarseness", "log_hist_msec", "log_max_value", "log_offset", "log_prio",
    "log_store_compressed", "log_unix_epoch", "loops", "max_latency", "max_open_zones", "mem",
    "merge_blktrace_file", "merge_blktrace_iters", "merge_blktrace_scalars", "name",
    "new_group", "nice", "norandommap", "nrfiles", "numa_cpu_nodes", "numa_mem_policy",
    "number_ios", "numjobs", "offset", "offset_align", "offset_increment", "opendir",
    "openfiles", "overwrite", "per_job_logs", "percentage_random", "percentile_list",
    "pre_read", "prio", "prioclass", "profile", "ramp_time", "random_distribution",
    "random_generator", "randrepeat", "randseed", "rate", "rate_cycle", "rate_ignore_thinktime",
    "rate_iops", "rate_iops_min", "rate_min", "rate_process", "read_beyond_wp", "read_iolog",
    "read_iolog_chunked", "refill_buffers", "replay_align", "replay_no_stall",
    "replay_redirect", "replay_scale", "replay_skip", "replay_time_scale", "runtime", "rw",
    "rw_sequencer", "rwmixread", "rwmixwrite", "scramble_buffers", "serialize_overlap",
    "significant_figures", "size", "slat_percentiles", "startdelay", "stats", "steadystate",
    "steadystate_duration", "steadystate_ramp_time", "stonewall", "sync", "sync_file_range",
    "thinktime", "thinktime_blocks", "thinktime_blocks_type", "thinktime_iotime",
    "thinktime_spin", "thread", "time_based", "trim_backlog", "trim_backlog_batch",
    "trim_percentage", "trim_verify_zero", "uid", "unified_rw_reporting", "unique_filename",
    "unit_base", "unlink", "unlink_each_loop", "verify", "verify_async", "verify_backlog",
    "verify_backlog_batch", "verify_dump", "verify_fatal", "verify_interval", "verify_offset",
    "verify_only", "verify_pattern", "verify_state_load", "verify_state_save", "wait_for",
    "write_barrier", "write_bw_log", "write_hint", "write_hist_log", "write_iolog",
    "write_iops_log", "write_lat_log", "zero_buffers", "zone_reset_frequency",
    "zone_reset_threshold", "zonecapacity", "zonemode", "zonerange", "zonesize", "zoneskip",
})
#: The options of fio's I/O engines (``fio --enghelp=ENGINE``), not already general ones.
ENGINE_OPTIONS: Final = frozenset({
    "arguments", "bindname", "brick", "busy_poll", "clientname", "clustername", "cmd_type",
    "cmdprio", "cmdprio_bssplit", "cmdprio_class", "cmdprio_percentage", "conf", "cpuchunks",
    "cpuload", "cpumode", "donorname", "exit_on_io_done", "fixedbufs", "force_async",
    "grace_time", "hipri", "hipri_percentage", "hostname", "inplace", "interface", "listen",
    "mss", "nodelay", "nonvectored", "nowait", "pingpong", "pool", "port", "program",
    "protocol", "rbdname", "readfua", "registerfiles", "sg_write_mode", "single-instance",
    "skip_bad", "sqthread_poll", "sqthread_poll_cpu", "stat_type", "std_redirect", "stream_id",
    "thp", "touch_objects", "ttl", "uncached", "uri", "userspace_reap", "verb", "volume",
    "window_size", "writefua",
})
#: Options that may be given alone, as flags (``time_based``); fio takes no next word as
#: their value on the command line.
FLAG_OPTIONS: Final = frozenset({
    "bs_unaligned", "exitall", "exitall_on_error", "group_reporting", "new_group",
    "norandommap", "refill_buffers", "stonewall", "thread", "time_based", "verify_only",
    "zero_buffers",
})
#: An option's other name -> its name (``blocksize`` -> ``bs``).
ALIASES: Final = {
    "blockalign": "ba",
    "blocksize": "bs",
    "blocksize_range": "bsrange",
    "blocksize_unaligned": "bs_unaligned",
    "disable_bw": "disable_bw_measurement",
    "fileoffset": "offset",
    "fill_fs": "fill_device",
    "io_limit": "io_size",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "iodepth_batch_submit": "iodepth_batch",
    "iomem": "mem",
    "nr_files": "nrfiles",
    "ratecycle": "rate_cycle",
    "ratemin": "rate_min",
    "readwrite": "rw",
    "ss": "steadystate",
    "ss_dur": "steadystate_duration",
    "ss_ramp": "steadystate_ramp_time",
    "timeout": "runtime",
    "wait_for_previous": "stonewall",
}
