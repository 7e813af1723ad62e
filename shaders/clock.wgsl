// Stage 1: advance every instance's clock by rate * dt and apply its loop mode
// (Game Engine Architecture 11.4.2). One thread per instance. CPU mirror: cpu::clock.

fn advance_clock(inst: Instance, clock: Clock, duration: f32, dt: f32) -> Clock {
    var t = clock.time + inst.rate * dt;
    var s = 0.0;
    if (inst.loop_mode == LOOP_ONCE) {
        t = clamp(t, 0.0, duration);
        s = t;
    } else if (inst.loop_mode == LOOP_REPEAT) {
        let end = duration * f32(inst.loop_count);
        t = clamp(t, 0.0, end);
        if (t >= end) {
            s = duration;
        } else {
            s = t - duration * floor(t / duration);
        }
    } else {
        t = t - duration * floor(t / duration);
        s = t;
    }
    s = clamp(s, 0.0, duration);
    return Clock(t, s, s / duration, 0u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn clock(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_linear(wg, groups) * WORKGROUP_SIZE + lid;
    if (i >= frame.instance_count) {
        return;
    }
    let inst = instances[i];
    clocks[i] = advance_clock(inst, clocks[i], clips[inst.clip].duration, frame.dt);
}
