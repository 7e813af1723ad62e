//! The importer's unit tests, on small files made in code: skins, meshes, animations, events and
//! morph-weight tracks, and malformed data that must give an error naming the file.

use super::*;
use crate::clip::ClipEvent;
use glam::Mat4;

fn tiny(json: &str) -> Result<Imported> {
    load_slice(json.as_bytes(), "tiny.gltf", None)
}

#[test]
fn unskinned_nodes_become_one_skeleton_with_unique_names() {
    let imp = tiny(
        r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
            "nodes":[{"name":"a","children":[1,2]},{"name":"b","translation":[0,1,0]},{"name":"b"}]}"#,
    )
    .unwrap();
    assert_eq!(imp.skeletons.len(), 1);
    let s = &imp.skeletons[0].skeleton;
    assert_eq!(s.joint_names(), ["a", "b", "node_2"]);
    assert_eq!(imp.skeletons[0].joint_nodes, [0, 1, 2]);
}

#[test]
fn cycles_and_bad_buffers_are_errors() {
    let e = tiny(
        r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
            "nodes":[{"children":[1]},{"children":[0]}]}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("tiny.gltf: ") && e.contains("twice"), "{e}");
    let e = tiny(
        r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":8,"uri":"data:application/octet-stream;base64,AAAA"}]}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("byteLength"), "{e}");
}

/// A small skinned file: a root, a chain of five joints (skin lists them in reverse), a mesh
/// of three vertices with u8 joints, normalized u8 weights and a second influence set, and a
/// cubic-spline animation. `tweak` edits the bytes and the JSON before loading.
fn skinned(tweak: impl FnOnce(&mut Vec<u8>, &mut serde_json::Value)) -> Result<Imported> {
    use base64::Engine as _;
    let mut b: Vec<u8> = Vec::new();
    for p in [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
        p.iter().for_each(|x| b.extend(x.to_le_bytes()));
    }
    b.extend([0u8, 1, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3]); // JOINTS_0 @36
    b.extend([255u8, 0, 0, 0, 128, 127, 0, 0, 100, 60, 40, 30]); // WEIGHTS_0 @48
    b.extend([0u8, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0]); // JOINTS_1 @60
    b.extend([0u8, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0]); // WEIGHTS_1 @72
    [0u16, 1, 2].iter().for_each(|x| b.extend(x.to_le_bytes())); // indices @84
    b.extend([0u8, 0]);
    [0.0f32, 1.0].iter().for_each(|x| b.extend(x.to_le_bytes())); // times @92
    for _ in 0..6 {
        [0.0f32, 0.0, 0.0, 1.0].iter().for_each(|x| b.extend(x.to_le_bytes())); // @100
    }
    let mut j = serde_json::json!({
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [
            {"name": "root", "children": [1, 6]},
            {"name": "j1", "children": [2], "translation": [0, 1, 0]},
            {"name": "j2", "children": [3]}, {"name": "j3", "children": [4]},
            {"name": "j4", "children": [5]}, {"name": "j5"},
            {"name": "body", "mesh": 0, "skin": 0, "translation": [9, 9, 9]}
        ],
        "skins": [{"joints": [5, 4, 3, 2, 1]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1,
            "WEIGHTS_0": 2, "JOINTS_1": 3, "WEIGHTS_1": 4}, "indices": 5}]}],
        "animations": [{"name": "bend", "samplers": [
                {"input": 6, "output": 7, "interpolation": "CUBICSPLINE"},
                {"input": 6, "output": 8}],
            "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}},
                {"sampler": 1, "target": {"node": 6, "path": "translation"}}]}],
        "accessors": [
            {"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0, 0, 0], "max": [1, 1, 0]},
            {"bufferView": 0, "byteOffset": 36, "componentType": 5121, "count": 3, "type": "VEC4"},
            {"bufferView": 0, "byteOffset": 48, "componentType": 5121, "normalized": true, "count": 3, "type": "VEC4"},
            {"bufferView": 0, "byteOffset": 60, "componentType": 5121, "count": 3, "type": "VEC4"},
            {"bufferView": 0, "byteOffset": 72, "componentType": 5121, "normalized": true, "count": 3, "type": "VEC4"},
            {"bufferView": 0, "byteOffset": 84, "componentType": 5123, "count": 3, "type": "SCALAR"},
            {"bufferView": 0, "byteOffset": 92, "componentType": 5126, "count": 2, "type": "SCALAR",
             "min": [0], "max": [1]},
            {"bufferView": 0, "byteOffset": 100, "componentType": 5126, "count": 6, "type": "VEC4"},
            {"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 2, "type": "VEC3"}
        ],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 196}],
        "buffers": [{"byteLength": 196}]
    });
    tweak(&mut b, &mut j);
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&b)
    );
    j["buffers"][0]["uri"] = serde_json::Value::String(uri);
    load_slice(j.to_string().as_bytes(), "made.gltf", None)
}

/// A morph-target weight channel becomes the morph-weight tracks of its skeleton's clip, one
/// per target, with the channel's keys; its mesh's targets are
/// imported with their names and default weights; a channel whose weights per key are not the
/// mesh's target count is an error.
#[test]
fn morph_target_weights_are_imported_as_weight_tracks() {
    let with_channel = |targets: usize| {
        move |b: &mut Vec<u8>, j: &mut serde_json::Value| {
            j["meshes"][0]["primitives"][0]["targets"] =
                serde_json::json!(vec![serde_json::json!({"POSITION": 0}); targets]);
            j["meshes"][0]["weights"] = serde_json::json!(vec![0.25; targets]);
            j["meshes"][0]["extras"] = serde_json::json!({"targetNames": ["smile", "blink"]});
            add_weights_channel(b, j);
        }
    };
    let e = skinned(with_channel(1)).unwrap_err().to_string();
    assert!(
        e.contains("2 morph-target weights per key") && e.contains("1 morph targets"),
        "{e}"
    );
    let imp = skinned(with_channel(2)).unwrap();
    let m = &imp.meshes[0].mesh.morph_targets;
    let names: Vec<&str> = m.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["smile", "blink"]);
    assert_eq!(m.default_weights, [0.25, 0.25]);
    assert!(!m.targets[0].deltas.is_empty());
    assert!(
        imp.meshes[0]
            .mesh
            .morph_targets
            .build(imp.meshes[0].mesh.positions.len())
            .is_ok()
    );
    check_weight_tracks(&imp);
}

/// Adds a weight channel (two targets, two keys) on node 6 to a file made by `skinned`.
fn add_weights_channel(_: &mut Vec<u8>, j: &mut serde_json::Value) {
    {
        // Two targets, two keys: (0, 0) then (0, 1), from the floats at byte 100.
        j["accessors"].as_array_mut().unwrap().push(
            serde_json::json!({"bufferView": 0, "byteOffset": 100, "componentType": 5126,
                "count": 4, "type": "SCALAR"}),
        );
        j["animations"][0]["samplers"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"input": 6, "output": 9}));
        j["animations"][0]["channels"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"sampler": 2, "target": {"node": 6, "path": "weights"}}));
    }
}

fn check_weight_tracks(imp: &super::Imported) {
    let c = &imp.skeletons[0].clips[0].clip;
    assert!(c.curves.is_empty());
    assert_eq!(c.morph_weights.len(), 2);
    assert_eq!(c.morph_weights[1].times, [0.0, 1.0]);
    assert_eq!(c.morph_weights[0].values, [0.0, 0.0]);
    assert_eq!(c.morph_weights[1].values, [0.0, 1.0]);
    let lib = imp.build_library().unwrap().library;
    assert!(lib.has_morph_weights());
    assert_eq!(lib.morph_targets(0), 2);
    assert!(
        imp.notes.iter().any(|n| n.contains("morph-weight tracks")),
        "{:?}",
        imp.notes
    );
}

/// Events in an animation's extras reach its clip and the built library; a malformed entry
/// is an error naming the file, the animation and the entry; other extras are ignored.
#[test]
fn events_are_read_from_animation_extras() {
    let imp = skinned(|_, j| {
        j["animations"][0]["extras"] = serde_json::json!({"events": [
            {"name": "hit", "time": 0.25, "threshold": 0.5}, {"name": "end", "time": 1.0}]});
    })
    .unwrap();
    let c = &imp.skeletons[0].clips[0].clip;
    assert_eq!(
        c.events,
        [
            ClipEvent {
                name: "hit".into(),
                time: 0.25,
                threshold: 0.5
            },
            ClipEvent::new("end", 1.0)
        ]
    );
    let lib = imp.build_library().unwrap().library;
    assert_eq!(lib.event_names(), ["hit", "end"]);
    assert_eq!(lib.clip_events(lib.clip_at(0).unwrap()).unwrap().len(), 2);
    let other = skinned(|_, j| j["animations"][0]["extras"] = serde_json::json!({"author": "x"})).unwrap();
    assert!(other.skeletons[0].clips[0].clip.events.is_empty());
    for bad in [
        serde_json::json!({"events": {"name": "x"}}),
        serde_json::json!({"events": [{"time": 0.5}]}),
        serde_json::json!({"events": [{"name": "late", "time": 3.0}]}),
        serde_json::json!({"events": [{"name": "x", "time": 0.5, "threshold": 2}]}),
    ] {
        let e = skinned(|_, j| j["animations"][0]["extras"] = bad.clone())
            .unwrap_err()
            .to_string();
        assert!(e.contains("made.gltf") && e.contains("animation 0 ('bend')"), "{e}");
    }
}

#[test]
fn skins_map_joints_keep_four_largest_influences_and_read_cubic_splines() {
    let imp = skinned(|_, _| {}).unwrap();
    assert_eq!(imp.skeletons.len(), 1);
    let s = &imp.skeletons[0];
    assert_eq!(s.skeleton.joint_names(), ["root", "j1", "j2", "j3", "j4", "j5"]);
    assert_eq!(s.joint_nodes, [0, 1, 2, 3, 4, 5]);
    assert_eq!(s.skin_joints, [5, 4, 3, 2, 1]);
    assert_eq!(s.skeleton.inverse_binds()[0], Mat4::IDENTITY);
    let m = &imp.meshes[0].mesh;
    assert_eq!(m.joints[0][0], 5);
    assert_eq!(m.weights[0], [1.0, 0.0, 0.0, 0.0]);
    assert!((m.weights[1][0] - 128.0 / 255.0).abs() < 1e-6, "{:?}", m.weights[1]);
    assert_eq!(m.joints[2], [5, 4, 3, 2]);
    assert!((m.weights[2][0] - 100.0 / 230.0).abs() < 1e-6, "{:?}", m.weights[2]);
    assert_eq!(imp.meshes[0].max_influences, 5);
    assert!(
        imp.notes.iter().any(|n| n.contains("1 vertices had more than 4")),
        "{:?}",
        imp.notes
    );
    assert!(
        imp.notes.iter().any(|n| n.contains("outside every skeleton")),
        "{:?}",
        imp.notes
    );
    let c = &s.clips[0].clip;
    assert_eq!((c.name.as_str(), c.duration, c.looping), ("bend", 1.0, false));
    let r = c.tracks[0].rotation.as_ref().unwrap();
    assert_eq!(c.tracks[0].joint, "j2");
    assert_eq!(
        (r.interpolation, r.times.len(), r.values.len()),
        (Interpolation::CubicSpline, 2, 6)
    );
    imp.build_library().unwrap();
    // The mesh node's own transform (9, 9, 9) is ignored; identity inverse binds: the
    // vertices follow j1's translation.
    let local = crate::reference::sample(&s.skeleton, c, 0.0);
    let model = crate::reference::local_to_model(&s.skeleton, &local);
    let pal = crate::reference::palette(&s.skeleton, &model);
    let pose = imp.gltf_pose(0, &model, &pal, &[]).unwrap();
    assert_eq!(pose.joints.len(), 5);
    assert_eq!(pose.joints[0].node, 5);
    assert!(
        (pose.vertices[1] - DVec3::new(1.0, 1.0, 0.0)).length() < 1e-6,
        "{:?}",
        pose.vertices
    );
}

#[test]
fn bad_data_is_an_error_naming_the_file() {
    type Tweak = Box<dyn FnOnce(&mut Vec<u8>, &mut serde_json::Value)>;
    let cases: Vec<(&str, Tweak)> = vec![
        ("exceed", Box::new(|_, j| j["accessors"][0]["count"] = 30.into())),
        (
            "component type",
            Box::new(|_, j| j["accessors"][0]["componentType"] = 5123.into()),
        ),
        (
            "non-finite",
            Box::new(|b, _| b[4..8].copy_from_slice(&f32::INFINITY.to_le_bytes())),
        ),
        ("skin joint 9", Box::new(|b, _| b[36] = 9)),
        ("indices[2]", Box::new(|b, _| b[88] = 7)),
        (
            "not part of the scene",
            Box::new(|_, j| {
                j["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .push(serde_json::json!({"name": "stray"}));
                j["skins"][0]["joints"] = serde_json::json!([5, 4, 3, 2, 7]);
            }),
        ),
        (
            "listed twice",
            Box::new(|_, j| j["skins"][0]["joints"] = serde_json::json!([5, 4, 3, 2, 2])),
        ),
        (
            "need 6 rotation values",
            Box::new(|_, j| j["accessors"][7]["count"] = 5.into()),
        ),
        (
            "not after",
            Box::new(|b, _| b[96..100].copy_from_slice(&0.0f32.to_le_bytes())),
        ),
        ("byteLength", Box::new(|b, _| b.truncate(100))),
    ];
    for (expect, tweak) in cases {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| skinned(tweak)));
        let e = r.expect("no panic").expect_err(expect).to_string();
        assert!(e.starts_with("made.gltf: ") && e.contains(expect), "{expect}: {e}");
    }
}

/// A morph target that is not right — a NaN displacement, a sparse index past the vertices —
/// is an error naming the file, the mesh and the target; nothing is imported.
#[test]
fn bad_morph_targets_are_errors_naming_file_mesh_and_target() {
    // Bytes at 196: three displacements (the second NaN), then a sparse index (7) and its value.
    let with_target = |target: serde_json::Value| {
        move |b: &mut Vec<u8>, j: &mut serde_json::Value| {
            for x in [0.0f32, 0.1, 0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.2] {
                b.extend(x.to_le_bytes());
            }
            b.extend(7u32.to_le_bytes());
            for x in [0.0f32, 0.5, 0.0] {
                b.extend(x.to_le_bytes());
            }
            j["bufferViews"] = serde_json::json!([
                {"buffer": 0, "byteOffset": 0, "byteLength": 196},
                {"buffer": 0, "byteOffset": 196, "byteLength": 36},
                {"buffer": 0, "byteOffset": 232, "byteLength": 4},
                {"buffer": 0, "byteOffset": 236, "byteLength": 12}
            ]);
            j["buffers"][0]["byteLength"] = serde_json::json!(b.len());
            j["accessors"].as_array_mut().unwrap().push(target.clone());
            j["meshes"][0]["primitives"][0]["targets"] = serde_json::json!([{"POSITION": 9}]);
        }
    };
    let nan = serde_json::json!({"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3"});
    let e = skinned(with_target(nan)).unwrap_err().to_string();
    assert!(
        e.contains("made.gltf")
            && e.contains("mesh '")
            && e.contains("morph target 0 POSITION")
            && e.contains("non-finite"),
        "{e}"
    );
    let sparse = serde_json::json!({"componentType": 5126, "count": 3, "type": "VEC3",
        "sparse": {"count": 1, "indices": {"bufferView": 2, "componentType": 5125}, "values": {"bufferView": 3}}});
    let e = skinned(with_target(sparse)).unwrap_err().to_string();
    assert!(
        e.contains("made.gltf") && e.contains("morph target 0 POSITION") && e.contains("sparse index"),
        "{e}"
    );
}
