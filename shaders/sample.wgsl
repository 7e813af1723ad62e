// Stage 2: sample and blend. For every joint of every instance, sample each clip of the instance's
// blend list at its time — keys found by binary search (random access, no cursor), interpolated —
// and blend them. One workgroup per instance, its threads striding over the joints.
// CPU mirror: cpu::sample.

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

// Joint `j` of an instance: the weighted blend of its list's samples (order-independent: weighted
// sums with quaternions sign-aligned to the heaviest sample's, normalized), the missing weight
// filled with the rest pose when the total is below MIN_BLEND_WEIGHT.
fn blend_joint(list: BlendList, skel: SkeletonInfo, j: u32, snapshot_slot: u32) -> LocalPose {
    var t = vec3<f32>(0.0);
    var s = vec3<f32>(0.0);
    var q = vec4<f32>(0.0);
    var q_ref = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    var total = 0.0;
    for (var k = 0u; k < min(list.count, MAX_BLEND_CLIPS); k++) {
        let e = list.samples[k];
        var p: LocalPose;
        if (e.clip == SNAPSHOT_CLIP) {
            p = local_poses[snapshot_slot];
        } else {
            p = sample_joint(clips[e.clip], j, e.time);
        }
        if (k == 0u) {
            q_ref = p.rotation;
        }
        var w = e.weight;
        t += p.translation.xyz * w;
        s += p.scale.xyz * w;
        if (dot(q_ref, p.rotation) < 0.0) {
            w = -w;
        }
        q += p.rotation * w;
        total += e.weight;
    }
    let fill = max(MIN_BLEND_WEIGHT - total, 0.0);
    if (fill > 0.0) {
        let r = skel.rest_offset + 3u * j;
        let rest_q = values[r + 1u];
        var wq = fill;
        if (dot(q_ref, rest_q) < 0.0) {
            wq = -fill;
        }
        t += values[r].xyz * fill;
        q += rest_q * wq;
        s += values[r + 2u].xyz * fill;
    }
    let sum = total + fill;
    return LocalPose(vec4<f32>(t / sum, 0.0), normalize(q), vec4<f32>(s / sum, 0.0));
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
    let list = blend_lists[i];
    let skel = skeletons[inst.skeleton];
    for (var j = lid; j < inst.joint_count; j += WORKGROUP_SIZE) {
        let slot = inst.joint_offset + j;
        let snapshot_slot = frame.snapshot_offset + slot;
        if (list.take_snapshot != 0u) {
            // The pose this instance showed last frame, kept as the source of a transition that
            // interrupted another. Each thread copies only its own joints.
            local_poses[snapshot_slot] = local_poses[slot];
        }
        local_poses[slot] = blend_joint(list, skel, j, snapshot_slot);
    }
}
