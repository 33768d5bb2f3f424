"""Encoding and submitting a recorded batch through wgpu-py's public API.

The same commands as ``native/encoder.py``'s ``NativeEncoder.encode_batch`` write: one compute
pass per run of dispatches, a pipeline or bind group set only when it changes, a staged
uniform copy ending the pass before the dispatch that reads it, readback copies after their
dispatch. ``DeviceQueue`` takes this path where the native one is unavailable (its self-test
failed on this wgpu build) and with ``CTHREADS_NATIVE_ENCODER=0``; the subprocess scenarios of
``tests/device/test_batching.py`` run on both and must give the same results.
"""

from __future__ import annotations

from .faults import lost_error


def submit_public(ctx, dispatches, copies, staged) -> None:
    """Encode ``dispatches`` (``batch.py``'s form; their ``pre`` copies read the buffer
    ``staged``) and then ``copies`` into one command buffer, and submit it to ``ctx``'s
    queue."""
    encoder = ctx.device.create_command_encoder()
    cpass = None
    last_pipeline = last_group = None
    for pipeline, bind_group, (gx, gy, gz), pre, post in dispatches:
        if pre is not None:
            if cpass is not None:
                cpass.end()
                cpass = None
            encoder.copy_buffer_to_buffer(staged, pre[0], pre[1], 0, pre[2])
        if cpass is None:
            cpass = encoder.begin_compute_pass()
            last_pipeline = last_group = None
        if pipeline is not last_pipeline:
            cpass.set_pipeline(pipeline)
            last_pipeline = pipeline
        if bind_group is not last_group:
            cpass.set_bind_group(0, bind_group)
            last_group = bind_group
        cpass.dispatch_workgroups(gx, gy, gz)
        if post:
            cpass.end()
            cpass = None
            _copy(encoder, post)
    if cpass is not None:
        cpass.end()
    _copy(encoder, copies)
    finished = encoder.finish()
    if ctx.lost is not None:          # a submission to a lost device aborts the process
        raise lost_error(ctx, f"{ctx.lost}; seen while submitting work")
    ctx.queue.submit([finished])


def submit_public_timed(ctx, cmds, copies, staged, timestamps) -> None:
    """Encode the commands of ``timing.commands`` (a batch with timestamps) then ``copies``
    into one command buffer, and submit it."""
    encoder = ctx.device.create_command_encoder()
    query_set, resolve = timestamps.query_set, timestamps.resolve
    cpass = None
    for cmd in cmds:
        op = cmd[0]
        if op == "dispatch":
            cpass.dispatch_workgroups(*cmd[1])
        elif op == "pipeline":
            cpass.set_pipeline(cmd[1])
        elif op == "group":
            cpass.set_bind_group(0, cmd[1])
        elif op == "stamp":
            cpass._write_timestamp(query_set, cmd[1])     # wgpu-py's name for the native call
        elif op == "pass":
            writes = {}
            if cmd[1] is not None:
                writes["beginning_of_pass_write_index"] = cmd[1]
            if cmd[2] is not None:
                writes["end_of_pass_write_index"] = cmd[2]
            cpass = encoder.begin_compute_pass(
                timestamp_writes=dict(query_set=query_set, **writes) if writes else None)
        elif op == "end":
            cpass.end()
            cpass = None
        elif op == "pre":
            off, buf, nbytes = cmd[1]
            encoder.copy_buffer_to_buffer(staged, off, buf, 0, nbytes)
        elif op == "copies":
            _copy(encoder, cmd[1])
        elif op == "resolve":
            encoder.resolve_query_set(query_set, cmd[1], cmd[2], resolve, cmd[3])
        else:                                         # "copy": one stamp to its job
            encoder.copy_buffer_to_buffer(resolve, cmd[1], cmd[2], cmd[3], 8)
    _copy(encoder, copies)
    finished = encoder.finish()
    if ctx.lost is not None:
        raise lost_error(ctx, f"{ctx.lost}; seen while submitting work")
    ctx.queue.submit([finished])


def _copy(encoder, copies) -> None:
    for src, src_off, dst, dst_off, nbytes in copies:
        encoder.copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)
