// Pairing's advice in the words of who asks: the Python package's keywords and classes, or a config
// file's keys (the TAPPAS plugin, whose users write JSON and call nothing). The Python wording is
// the package's documented one (docs/troubleshooting.md); the config wording names the key that
// fixes the problem (docs/gstreamer.md).
#include "pairing_detail.hpp"

namespace hailo_decode::setup::detail {

std::string setting_text(Wording w, const std::string& key, const std::string& py_value, const std::string& json_value) {
    return w == Wording::Python ? key + "=" + py_value : "\"" + key + "\": " + json_value;
}

std::string key_text(Wording w, const std::string& key) {
    return w == Wording::Python ? key + "=" : "\"" + key + "\"";
}

std::string heads_text(Wording w, HeadsAdvice form) {
    if (w == Wording::Python) {
        switch (form) {
            case HeadsAdvice::KptOrAngle: return "heads=[Head(box=..., cls=..., stride=..., kpt=... or angle=...), ...]";
            case HeadsAdvice::Mask: return "heads=[Head(box=..., cls=..., stride=..., mask=...), ...]";
            case HeadsAdvice::Angle: return "heads=[Head(box, cls, angle=...), ...]";
            case HeadsAdvice::Anchor: return "heads=[AnchorHead(output, anchors=((w, h), ...), stride=...), ...]";
            case HeadsAdvice::Yolox: return "heads=[YoloxHead(reg, obj, cls, stride=...), ...]";
        }
    }
    switch (form) {
        case HeadsAdvice::KptOrAngle:
            return "\"heads\": [{\"box\": ..., \"cls\": ..., \"stride\": ..., \"kpt\" or \"angle\": ...}, ...]";
        case HeadsAdvice::Mask: return "\"heads\": [{\"box\": ..., \"cls\": ..., \"stride\": ..., \"mask\": ...}, ...]";
        case HeadsAdvice::Angle: return "\"heads\": [{\"box\": ..., \"cls\": ..., \"angle\": ...}, ...]";
        case HeadsAdvice::Anchor: return "\"heads\": [{\"output\": ..., \"anchors\": [[w, h], ...], \"stride\": ...}, ...]";
        case HeadsAdvice::Yolox: return "\"heads\": [{\"reg\": ..., \"obj\": ..., \"cls\": ..., \"stride\": ...}, ...]";
    }
    return "";
}

std::string name_heads_advice(Wording w) {
    if (w == Wording::Python) return "pass " + heads_text(w, HeadsAdvice::KptOrAngle) + " or use DecoderConfig.from_nms_json";
    return "name the heads in the config: " + heads_text(w, HeadsAdvice::KptOrAngle) + ", or give \"nms_json\"";
}

std::string family_advice(Wording w) {
    if (w == Wording::Python)
        return "use DecoderConfig.from_nms_json(...) (the Model Zoo JSON) or DecoderConfig.from_hef(...) (a HEF with its "
               "NMS op)";
    return "give the Model Zoo NMS JSON in \"nms_json\"";
}

std::string unused_outputs_advice(Wording w) {
    return w == Wording::Python ? "remove them or add heads" : "name them in \"heads\" (or leave \"heads\" out)";
}

}  // namespace hailo_decode::setup::detail
