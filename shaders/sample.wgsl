// Stage 2: sample every joint of every instance's clip at the instance's clock: find the keys
// around the time by binary search (random access, no cursor) and interpolate. One workgroup per
// instance, its threads striding over the joints. CPU mirror: cpu::sample.

// Value of key `k` (the middle value of a cubic-spline key).
fn key_value(track: Track, k: u32) -> vec4<f32> {
    if (track.interpolation == INTERP_CUBIC) {
        return values[track.value_offset + 3u * k + 1u];
    }
    return values[track.value_offset + k];
}

// A track at time `t`, clamped to its keys. Rotations are slerped (linear) or normalized (cubic).
fn sample_track(track: Track, t: f32, rotation: bool) -> vec4<f32> {
    let n = track.key_count;
    let base = track.time_offset;
    if (n <= 1u || t <= times[base]) {
        return key_value(track, 0u);
    }
    if (t >= times[base + n - 1u]) {
        return key_value(track, n - 1u);
    }
    // Largest k with times[k] <= t; times[hi] > t.
    var lo = 0u;
    var hi = n - 1u;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (times[base + mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t0 = times[base + lo];
    let dt = times[base + hi] - t0;
    let u = (t - t0) / dt;
    if (track.interpolation == INTERP_STEP) {
        return values[track.value_offset + lo];
    }
    if (track.interpolation == INTERP_LINEAR) {
        let a = values[track.value_offset + lo];
        let b = values[track.value_offset + hi];
        if (rotation) {
            return quat_interp(a, b, u);
        }
        return a * (1.0 - u) + b * u;
    }
    let h = hermite_basis(u);
    let p0 = values[track.value_offset + 3u * lo + 1u];
    let m0 = values[track.value_offset + 3u * lo + 2u] * dt;
    let p1 = values[track.value_offset + 3u * hi + 1u];
    let m1 = values[track.value_offset + 3u * hi] * dt;
    let v = p0 * h.x + m0 * h.y + p1 * h.z + m1 * h.w;
    if (rotation) {
        return normalize(v);
    }
    return v;
}

// Joint `j` of `clip` at time `t`.
fn sample_joint(clip: ClipInfo, j: u32, t: f32) -> LocalPose {
    let first = clip.track_offset + 3u * j;
    let translation = sample_track(tracks[first], t, false);
    let rotation = sample_track(tracks[first + 1u], t, true);
    let scale = sample_track(tracks[first + 2u], t, false);
    return LocalPose(vec4<f32>(translation.xyz, 0.0), rotation, vec4<f32>(scale.xyz, 0.0));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sample(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_linear(wg, groups);
    if (i >= frame.instance_count) {
        return;
    }
    let inst = instances[i];
    let clip = clips[inst.clip];
    let t = clocks[i].sample_time;
    for (var j = lid; j < inst.joint_count; j += WORKGROUP_SIZE) {
        local_poses[inst.joint_offset + j] = sample_joint(clip, j, t);
    }
}
