// stub
fn node_child_weights(node: BlendNode, params: vec4<f32>) -> array<f32, 16> {
    var w: array<f32, 16>;
    let c = blend_children[node.child_offset];
    let t = blend_triangles[node.triangle_offset];
    return w;
}
