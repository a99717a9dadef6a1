// The TAPPAS elements our real-pipeline tests use, registered as TAPPAS' own gsthailotools.cpp
// registers them (same names, ranks and metas); the rest of that file's elements need ZeroMQ and
// are not built here.
#include <gst/gst.h>

#include "cropping/gsthailoaggregator.hpp"
#include "cropping/gsthailocropper.hpp"
#include "filter/gsthailofilter.hpp"
#include "gst_hailo_cropping_meta.hpp"
#include "gst_hailo_meta.hpp"
#include "gst_hailo_stream_meta.hpp"
#include "overlay/gsthailooverlay.hpp"
#include "tracking/gsthailotracker.hpp"

#define PACKAGE "gst-hailo-tools"
#define VERSION "5.1.0"

static gboolean plugin_init(GstPlugin* plugin) {
    gst_element_register(plugin, "hailooverlay", GST_RANK_PRIMARY, GST_TYPE_HAILO_OVERLAY);
    gst_element_register(plugin, "hailofilter", GST_RANK_PRIMARY, GST_TYPE_HAILO_FILTER);
    gst_element_register(plugin, "hailocropper", GST_RANK_PRIMARY, GST_TYPE_HAILO_CROPPER);
    gst_element_register(plugin, "hailoaggregator", GST_RANK_PRIMARY, GST_TYPE_HAILO_AGGREGATOR);
    gst_element_register(plugin, "hailotracker", GST_RANK_PRIMARY, GST_TYPE_HAILO_TRACKER);
    gst_hailo_meta_get_info();
    gst_hailo_meta_api_get_type();
    gst_hailo_cropping_meta_get_info();
    gst_hailo_cropping_meta_api_get_type();
    gst_hailo_stream_meta_get_info();
    gst_hailo_stream_meta_api_get_type();
    return TRUE;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, hailotools, "hailo tools plugin (test subset)", plugin_init,
                  VERSION, "LGPL", PACKAGE, "https://hailo.ai/")
