// ns-3 (3.37) reference for celltcp's hidden stations (crates/celltcp-wifi/tests/hidden.rs,
// tests/ns3_hidden.rs; docs/validation.md, "Hidden stations vs ns-3").
//
// Topology (as ns-3's examples/wireless/wifi-hidden-terminal.cc):
//
//   sta 0  )))  AP  (((  sta 1
//
// 802.11a (WIFI_STANDARD_80211a, channel 36, 20 MHz), non-QoS DCF (no aggregation), YANS
// channel with a MatrixPropagationLossModel: each station reaches the AP at --loss dB (default
// 50: 16.02 dBm − 50 dB = −34 dBm against a −94 dBm noise floor, SNR 60 dB as celltcp's
// FixedSnr(60)); between the stations 200 dB (--hidden=1: neither senses the other) or --loss
// dB (--hidden=0, the control case). Error rate model --errorModel (default
// ns3::TableBasedErrorRateModel, set explicitly; ns3::NistErrorRateModel decodes no frame at the
// SINR of an equal-power overlap), ns-3's default PHY otherwise (threshold preamble detection: a
// preamble is detected when its SINR is at least 4 dB, and the PHY then stays on that PPDU: a
// later one is dropped, RXING, and counts as interference; no frame capture model).
// ConstantRateWifiManager, DataMode OfdmRate<rate>Mbps, ControlMode --control (default: the data rate's control-response rate as celltcp picks it:
// 24 Mbit/s for 54, 6 for 6), RtsCtsThreshold 0 (--rts=1) or 999999 (--rts=0); retry limits
// ns-3's defaults (MaxSsrc 7, MaxSlrc 4, as celltcp's dot11ShortRetryLimit/LongRetryLimit).
//
// Traffic: each station sends saturating UDP (OnOff, 1472-byte payloads = 1500-byte IP
// packets, the 1,500-byte MSDUs of celltcp's test; --udpRate per station) to a sink on the AP.
// Traffic starts at --start s (after association; the JSON gives the count of associations and
// the time of the last), counted over [start, duration]. ARP caches filled statically and one
// lone packet per station first (without them one station's ARP exchange dies under the other's
// saturated traffic, ArpCache gives up for 100 s, and that station sends nothing).
// WifiMacQueue 1000 packets.
//
// Counters over [start, duration] (traces):
//   - PhyTxPsduBegin at the stations: data MPDUs and RTSs sent;
//   - at the AP, by frame kind (data, rts, ...): PhyRxBegin (PPDUs whose payload reception
//     started), PhyRxEnd (payload reception completed, decoded or not), MonitorSnifferRx
//     (decoded: ap_rx_ok), PhyRxDrop by reason (RXING: arrived while receiving another;
//     PREAMBLE_DETECT_FAILURE: its preamble's SINR under the threshold preamble detection
//     model's 4 dB; BUSY_DECODING_PREAMBLE ...);
//   - MacTxDataFailed / MacTxRtsFailed / MacTxFinalDataFailed at the stations.
// lost_data = 1 − data MPDUs decoded by the AP / data MPDUs sent by the stations (the same for
// RTSs), the fraction celltcp's test counts as collisions / ppdu_tx.
//
// --overlaps=1 adds, from the stations' PPDUs and the AP's decodes: for every pair of the two
// stations' PPDUs that overlap, whether the AP decoded the earlier and the later one, by the part
// of the earlier one covered ("overlaps"); the pairs of exchange-opening PPDUs (data, or RTS)
// starting within 12 slots by their offset in 9 µs slots ("near_offset_slots"); and, after each
// ACK, the slot (after ACK + DIFS) at which the first and the second station open their next
// exchange ("after_ack_first_slots", "after_ack_second_slots", 40 = 40 or more); per station,
// the failed openings (an RTS not followed by the station's data, or data not decoded) before
// each success ("failures_before_success", 7 = 7 or more).
//
// Output: one JSON line on stdout.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

using namespace ns3;

static double g_countFrom = 0;
static Ptr<WifiPhy> g_apPhy;
// counters, by frame kind ("data", "rts", ...)
static std::map<std::string, uint64_t> g_staTx;
static std::map<std::string, uint64_t> g_apRxBegin;
static std::map<std::string, uint64_t> g_apRxEnd;
static std::map<std::string, uint64_t> g_apRxDrop; // "kind/reason"
static std::map<std::string, uint64_t> g_mac;
static std::map<std::string, uint64_t> g_txModes; // "kind@mode" on the air

static std::string
JsonDouble(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return buf;
}

static bool
Counting()
{
    return Simulator::Now().GetSeconds() >= g_countFrom;
}

static std::string
Kind(const WifiMacHeader& h)
{
    return h.IsQosData() || h.IsData() ? "data"
           : h.IsRts()                 ? "rts"
           : h.IsCts()                 ? "cts"
           : h.IsAck()                 ? "ack"
           : h.IsBeacon()              ? "beacon"
           : h.IsMgt()                 ? "management"
                                       : "other";
}

static std::string
Kind(Ptr<const Packet> p)
{
    WifiMacHeader h;
    if (p->PeekHeader(h) == 0)
    {
        return "unknown";
    }
    return Kind(h);
}

// --overlaps=1: every station PPDU over the measured span (start, end, sender, kind) and the
// times the AP decoded a frame from each sender, to see which of two overlapping PPDUs survive.
struct StaPpdu
{
    double start;
    double end;
    int sta;
    std::string kind;
    bool decoded = false;
};
static bool g_overlaps = false;
static bool g_rtsMode = false;
static std::vector<StaPpdu> g_ppdus;
static std::vector<std::pair<double, Mac48Address>> g_decodes;
static std::vector<double> g_ackEnds; // the AP's ACKs (and CTSs: kind in g_apResp) on the air
static std::vector<std::string> g_apResp;
static Mac48Address g_staAddr[2];

static void
OnTxPsduBegin(std::string ctx, WifiConstPsduMap psdus, WifiTxVector txVector, double)
{
    if (g_overlaps && Counting() && ctx.find("/NodeList/0/") != std::string::npos)
    {
        const auto& psdu = psdus.begin()->second;
        double d = WifiPhy::CalculateTxDuration(psdu->GetSize(), txVector, WIFI_PHY_BAND_5GHZ).GetSeconds();
        g_ackEnds.push_back(Simulator::Now().GetSeconds() + d);
        g_apResp.push_back(Kind(psdu->GetHeader(0)));
    }
    if (g_overlaps && Counting() && ctx.find("/NodeList/0/") == std::string::npos)
    {
        const auto& psdu = psdus.begin()->second;
        double t = Simulator::Now().GetSeconds();
        double d = WifiPhy::CalculateTxDuration(psdu->GetSize(), txVector, WIFI_PHY_BAND_5GHZ).GetSeconds();
        g_ppdus.push_back({t, t + d, ctx.find("/NodeList/1/") != std::string::npos ? 0 : 1, Kind(psdu->GetHeader(0))});
    }
    if (!Counting())
    {
        return;
    }
    bool fromSta = ctx.find("/NodeList/0/") == std::string::npos; // node 0 is the AP
    for (const auto& [id, psdu] : psdus)
    {
        std::string k = Kind(psdu->GetHeader(0));
        g_txModes[k + "@" + txVector.GetMode().GetUniqueName()] += 1;
        if (fromSta)
        {
            g_staTx[k] += psdu->GetNMpdus();
            g_staTx[k + (ctx.find("/NodeList/1/") != std::string::npos ? "_sta0" : "_sta1")] += psdu->GetNMpdus();
        }
    }
}

static void
OnApRxBegin(Ptr<const Packet> p, RxPowerWattPerChannelBand)
{
    if (Counting())
    {
        g_apRxBegin[Kind(p)] += 1;
    }
}

static void
OnApRxEnd(Ptr<const Packet> p)
{
    if (Counting())
    {
        g_apRxEnd[Kind(p)] += 1;
    }
}

static std::map<std::string, uint64_t> g_apRxOk;

static void
OnApSniffRx(Ptr<const Packet> p, uint16_t, WifiTxVector, MpduInfo, SignalNoiseDbm, uint16_t)
{
    if (Counting())
    {
        g_apRxOk[Kind(p)] += 1;
        WifiMacHeader h;
        p->PeekHeader(h);
        if (g_overlaps && (h.IsData() || h.IsRts()))
        {
            g_decodes.emplace_back(Simulator::Now().GetSeconds(), h.GetAddr2());
        }
    }
}

static void
OnApRxDrop(Ptr<const Packet> p, WifiPhyRxfailureReason reason)
{
    if (Counting())
    {
        std::ostringstream s;
        s << Kind(p) << "/" << reason;
        g_apRxDrop[s.str()] += 1;
    }
}

static void
OnMac(std::string what, Mac48Address)
{
    if (Counting())
    {
        g_mac[what] += 1;
    }
}

static uint32_t g_assoc = 0;
static Time g_lastAssoc;

static void
OnAssoc(Mac48Address)
{
    g_assoc += 1;
    g_lastAssoc = Simulator::Now();
}

static uint32_t g_deassoc = 0;

static void
OnDeAssoc(Mac48Address)
{
    g_deassoc += 1;
}

static void
Obj(std::ostringstream& js, const char* name, const std::map<std::string, uint64_t>& m)
{
    js << ",\"" << name << "\":{";
    bool first = true;
    for (const auto& [k, v] : m)
    {
        js << (first ? "" : ",") << "\"" << k << "\":" << v;
        first = false;
    }
    js << "}";
}

int
main(int argc, char* argv[])
{
    uint32_t rate = 6;
    std::string control = "";
    bool rts = false;
    bool hidden = true;
    double loss = 50.0;
    double duration = 6.0;
    double start = 1.0;
    std::string udpRate = "";
    uint32_t seed = 1;
    std::string errorModel = "ns3::TableBasedErrorRateModel";

    CommandLine cmd(__FILE__);
    cmd.AddValue("rate", "802.11a data rate, Mbit/s (6, 9, 12, 18, 24, 36, 48, 54)", rate);
    cmd.AddValue("control", "ControlMode rate, Mbit/s (default: 24 for data >= 24, 12 for >= 12, else 6)", control);
    cmd.AddValue("rts", "RTS/CTS for every data frame (RtsCtsThreshold 0 instead of 999999)", rts);
    cmd.AddValue("hidden", "stations hidden from each other (200 dB between them)", hidden);
    cmd.AddValue("loss", "path loss station-AP (and station-station when not hidden), dB", loss);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("start", "traffic start, seconds", start);
    cmd.AddValue("udpRate", "offered UDP rate per station (default 2 x the data rate)", udpRate);
    cmd.AddValue("seed", "ns-3 RNG run number", seed);
    cmd.AddValue("errorModel", "the PHYs' error rate model", errorModel);
    cmd.AddValue("overlaps", "report which of two overlapping station PPDUs the AP decoded", g_overlaps);
    cmd.Parse(argc, argv);
    const uint32_t rates[] = {6, 9, 12, 18, 24, 36, 48, 54};
    if (std::find(std::begin(rates), std::end(rates), rate) == std::end(rates) || duration <= start)
    {
        std::cerr << "wifi-hidden: expected --rate in 6, 9, 12, 18, 24, 36, 48, 54 and --duration > --start\n";
        return 2;
    }
    if (control.empty())
    {
        control = std::to_string(rate >= 24 ? 24 : rate >= 12 ? 12 : 6);
    }
    if (udpRate.empty())
    {
        udpRate = std::to_string(2 * rate) + "Mbps";
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    g_countFrom = start;
    g_rtsMode = rts;
    Config::SetDefault("ns3::WifiMacQueue::MaxSize", QueueSizeValue(QueueSize("1000p")));
    Config::SetDefault("ns3::WifiRemoteStationManager::RtsCtsThreshold", UintegerValue(rts ? 0 : 999999));
    Config::SetDefault("ns3::WifiRemoteStationManager::FragmentationThreshold", UintegerValue(999999));

    NodeContainer nodes;
    nodes.Create(3); // 0: AP, 1 and 2: stations
    MobilityHelper mob;
    mob.Install(nodes);
    Ptr<MatrixPropagationLossModel> lossModel = CreateObject<MatrixPropagationLossModel>();
    lossModel->SetDefaultLoss(200);
    Ptr<MobilityModel> m0 = nodes.Get(0)->GetObject<MobilityModel>();
    Ptr<MobilityModel> m1 = nodes.Get(1)->GetObject<MobilityModel>();
    Ptr<MobilityModel> m2 = nodes.Get(2)->GetObject<MobilityModel>();
    lossModel->SetLoss(m0, m1, loss); // symmetric by default
    lossModel->SetLoss(m0, m2, loss);
    lossModel->SetLoss(m1, m2, hidden ? 200 : loss);
    Ptr<YansWifiChannel> chan = CreateObject<YansWifiChannel>();
    chan->SetPropagationLossModel(lossModel);
    chan->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211a);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode", StringValue("OfdmRate" + std::to_string(rate) + "Mbps"),
                                 "ControlMode", StringValue("OfdmRate" + control + "Mbps"));
    YansWifiPhyHelper phy;
    phy.SetChannel(chan);
    phy.SetErrorRateModel(errorModel);
    WifiMacHelper mac;
    Ssid ssid("hidden");
    mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid));
    NetDeviceContainer apDev = wifi.Install(phy, mac, nodes.Get(0));
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid), "ActiveProbing", BooleanValue(false));
    NetDeviceContainer staDevs = wifi.Install(phy, mac, NodeContainer(nodes.Get(1), nodes.Get(2)));

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.255.0");
    Ipv4InterfaceContainer apIf = addr.Assign(apDev);
    addr.Assign(staDevs);
    TrafficControlHelper tch;
    tch.Uninstall(apDev);
    tch.Uninstall(staDevs);
    // Static ARP: a hidden station's broadcast ARP request collides with the other's saturated
    // traffic, and after ArpCache::MaxRetries the entry is dead for 100 s (the station then
    // sends nothing: seen with seed 1 at 6 Mbit/s).
    NeighborCacheHelper neigh;
    neigh.PopulateNeighborCache();

    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < 2; ++i)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sh("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        sinks.push_back(DynamicCast<PacketSink>(sh.Install(nodes.Get(0)).Get(0)));
        OnOffHelper src("ns3::UdpSocketFactory", InetSocketAddress(apIf.GetAddress(0), port));
        src.SetConstantRate(DataRate(udpRate), 1472);
        ApplicationContainer ca = src.Install(nodes.Get(1 + i));
        ca.Start(Seconds(start - 0.1)); // the queue full by `start`
        // one packet from each station alone on the air first, so that any ARP exchange is over
        // before the saturation (a hidden station's ARP frames are lost to the other's traffic)
        OnOffHelper warm("ns3::UdpSocketFactory", InetSocketAddress(apIf.GetAddress(0), port));
        warm.SetConstantRate(DataRate("1Mbps"), 1472);
        warm.SetAttribute("MaxBytes", UintegerValue(1472));
        ApplicationContainer wa = warm.Install(nodes.Get(1 + i));
        wa.Start(Seconds(start - 0.5 + 0.1 * i));
    }

    Config::Connect("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Phy/PhyTxPsduBegin", MakeCallback(&OnTxPsduBegin));
    Ptr<WifiPhy> apPhy = DynamicCast<WifiNetDevice>(apDev.Get(0))->GetPhy();
    apPhy->TraceConnectWithoutContext("PhyRxBegin", MakeCallback(&OnApRxBegin));
    apPhy->TraceConnectWithoutContext("PhyRxEnd", MakeCallback(&OnApRxEnd));
    apPhy->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnApRxDrop));
    apPhy->TraceConnectWithoutContext("MonitorSnifferRx", MakeCallback(&OnApSniffRx));
    for (uint32_t i = 0; i < 2; ++i)
    {
        Ptr<WifiRemoteStationManager> rsm = DynamicCast<WifiNetDevice>(staDevs.Get(i))->GetRemoteStationManager();
        rsm->TraceConnectWithoutContext("MacTxDataFailed", MakeBoundCallback(&OnMac, std::string("data_failed")));
        rsm->TraceConnectWithoutContext("MacTxRtsFailed", MakeBoundCallback(&OnMac, std::string("rts_failed")));
        rsm->TraceConnectWithoutContext("MacTxFinalDataFailed", MakeBoundCallback(&OnMac, std::string("final_data_failed")));
        DynamicCast<WifiNetDevice>(staDevs.Get(i))->GetMac()->TraceConnectWithoutContext("Assoc", MakeCallback(&OnAssoc));
        DynamicCast<WifiNetDevice>(staDevs.Get(i))->GetMac()->TraceConnectWithoutContext("DeAssoc", MakeCallback(&OnDeAssoc));
        rsm->TraceConnectWithoutContext("MacTxFinalRtsFailed", MakeBoundCallback(&OnMac, std::string("final_rts_failed")));
    }

    for (uint32_t i = 0; i < 2; ++i)
    {
        g_staAddr[i] = DynamicCast<WifiNetDevice>(staDevs.Get(i))->GetMac()->GetAddress();
    }
    // bytes at the sinks at `start`, to count over [start, duration] only
    std::vector<uint64_t> atStart(2, 0);
    Simulator::Schedule(Seconds(start), [&]() {
        for (uint32_t i = 0; i < 2; ++i)
        {
            atStart[i] = sinks[i]->GetTotalRx();
        }
    });
    Simulator::Stop(Seconds(duration));
    Simulator::Run();
    double span = duration - start;
    double per[2];
    for (uint32_t i = 0; i < 2; ++i)
    {
        per[i] = (sinks[i]->GetTotalRx() - atStart[i]) * 8.0 / span;
    }
    Simulator::Destroy();

    auto lost = [](const std::string& k) {
        uint64_t tx = g_staTx.count(k) ? g_staTx[k] : 0;
        uint64_t ok = g_apRxOk.count(k) ? g_apRxOk[k] : 0;
        return tx ? 1.0 - double(ok) / double(tx) : 0.0;
    };
    std::ostringstream js;
    js << "{\"simulator\":\"ns-3.37\",\"scenario\":\"wifi-hidden\",\"rate_mbps\":" << rate << ",\"control_mbps\":" << control
       << ",\"error_model\":\"" << errorModel << "\",\"rts\":" << (rts ? "true" : "false") << ",\"hidden\":" << (hidden ? "true" : "false") << ",\"seed\":" << seed
       << ",\"goodput_bps_total\":" << JsonDouble(per[0] + per[1]) << ",\"per_flow_goodput_bps\":[" << JsonDouble(per[0])
       << "," << JsonDouble(per[1]) << "]"
       << ",\"associations\":" << g_assoc << ",\"last_association_s\":" << JsonDouble(g_lastAssoc.GetSeconds())
       << ",\"deassociations\":" << g_deassoc << ",\"lost_data\":" << JsonDouble(lost("data")) << ",\"lost_rts\":" << JsonDouble(lost("rts"));
    Obj(js, "sta_tx", g_staTx);
    Obj(js, "ap_rx_begin", g_apRxBegin);
    Obj(js, "ap_rx_end", g_apRxEnd);
    Obj(js, "ap_rx_ok", g_apRxOk);
    Obj(js, "ap_rx_drop", g_apRxDrop);
    Obj(js, "mac", g_mac);
    Obj(js, "tx_modes", g_txModes);
    if (g_overlaps)
    {
        // mark decoded PPDUs: the decode comes at the PPDU's end (+ propagation, < 1 µs)
        for (const auto& [t, a] : g_decodes)
        {
            for (auto it = g_ppdus.rbegin(); it != g_ppdus.rend(); ++it)
            {
                if (g_staAddr[it->sta] == a && std::abs(it->end - t) < 2e-6)
                {
                    it->decoded = true;
                    break;
                }
            }
        }
        // overlapping pairs (the later one starts before the earlier one ends): how many of the
        // earlier and of the later PPDUs the AP decoded, by the part of the earlier PPDU the
        // later one covers (< 10 %, 10-50 %, > 50 %, and the same start within 1 µs)
        std::map<std::string, std::pair<uint64_t, uint64_t>> first, second; // bucket -> (pairs, decoded)
        std::map<int, uint64_t> offsetSlots; // RTS/RTS and data/data pairs by start offset, 9 µs slots
        std::map<int, uint64_t> nearSlots;   // the same for all pairs starting within 12 slots
        for (size_t i = 0; i < g_ppdus.size(); ++i)
        {
            for (size_t j = i + 1; j < g_ppdus.size() && g_ppdus[j].start < g_ppdus[i].start + 12 * 9e-6; ++j)
            {
                if (g_ppdus[j].sta != g_ppdus[i].sta && g_ppdus[j].kind == g_ppdus[i].kind)
                {
                    nearSlots[int(std::floor((g_ppdus[j].start - g_ppdus[i].start) / 9e-6 + 0.5))] += 1;
                }
            }
        }
        for (size_t i = 0; i < g_ppdus.size(); ++i)
        {
            for (size_t j = i + 1; j < g_ppdus.size() && g_ppdus[j].start < g_ppdus[i].end; ++j)
            {
                if (g_ppdus[j].sta == g_ppdus[i].sta)
                {
                    continue;
                }
                const StaPpdu& a = g_ppdus[i];
                const StaPpdu& b = g_ppdus[j];
                double covered = (std::min(a.end, b.end) - b.start) / (a.end - a.start);
                std::string bucket = a.kind + "/" + b.kind + "/" +
                                     (b.start - a.start < 1e-6 ? "same-start"
                                      : covered < 0.1     ? "cover<10%"
                                      : covered < 0.5     ? "cover10-50%"
                                                          : "cover>50%");
                if (a.kind == b.kind)
                {
                    offsetSlots[int(std::floor((b.start - a.start) / 9e-6 + 0.5))] += 1;
                }
                first[bucket].first += 1;
                first[bucket].second += a.decoded;
                second[bucket].first += 1;
                second[bucket].second += b.decoded;
            }
        }
        js << ",\"overlaps\":{";
        bool f = true;
        for (const auto& [k, v] : first)
        {
            js << (f ? "" : ",") << "\"" << k << "\":{\"pairs\":" << v.first << ",\"earlier_decoded\":" << v.second
               << ",\"later_decoded\":" << second[k].second << "}";
            f = false;
        }
        // after each ACK: each station's next exchange-opening PPDU, in slots after ACK end + DIFS
        // (34 µs), the lower and the higher of the two
        std::map<int, uint64_t> firstAfterAck, secondAfterAck;
        size_t j = 0;
        for (size_t i = 0; i < g_ackEnds.size(); ++i)
        {
            if (g_apResp[i] != "ack")
            {
                continue;
            }
            double t = g_ackEnds[i];
            while (j < g_ppdus.size() && g_ppdus[j].start < t)
            {
                ++j;
            }
            double next[2] = {-1, -1};
            for (size_t k = j; k < g_ppdus.size() && (next[0] < 0 || next[1] < 0); ++k)
            {
                if (g_ppdus[k].kind == "cts" || g_ppdus[k].kind == "ack")
                {
                    continue;
                }
                if (next[g_ppdus[k].sta] < 0)
                {
                    next[g_ppdus[k].sta] = g_ppdus[k].start;
                }
            }
            if (next[0] < 0 || next[1] < 0)
            {
                continue;
            }
            double lo = std::min(next[0], next[1]) - t - 34e-6;
            double hi = std::max(next[0], next[1]) - t - 34e-6;
            firstAfterAck[int(std::floor(lo / 9e-6 + 0.5))] += 1;
            secondAfterAck[std::min(40, int(std::floor(hi / 9e-6 + 0.5)))] += 1;
        }
        // per station: the number of failed openings (RTS not followed by the station's data, or
        // data not decoded) before each success
        std::map<int, uint64_t> failRuns;
        for (int st = 0; st < 2; ++st)
        {
            int run = 0;
            for (size_t i = 0; i < g_ppdus.size(); ++i)
            {
                const StaPpdu& p = g_ppdus[i];
                if (p.sta != st || p.kind == "data" && g_rtsMode)
                {
                    continue;
                }
                bool ok = p.decoded;
                if (g_rtsMode)
                {
                    ok = false;
                    for (size_t k = i + 1; k < g_ppdus.size() && g_ppdus[k].start < p.end + 200e-6; ++k)
                    {
                        if (g_ppdus[k].sta == st)
                        {
                            ok = g_ppdus[k].kind == "data";
                            break;
                        }
                    }
                }
                if (ok)
                {
                    failRuns[std::min(run, 7)] += 1;
                    run = 0;
                }
                else
                {
                    run += 1;
                }
            }
        }
        js << "},\"failures_before_success\":{";
        f = true;
        for (const auto& [k, v] : failRuns)
        {
            js << (f ? "" : ",") << "\"" << k << "\":" << v;
            f = false;
        }
        js << "},\"near_offset_slots\":{";
        f = true;
        for (const auto& [k, v] : nearSlots)
        {
            js << (f ? "" : ",") << "\"" << k << "\":" << v;
            f = false;
        }
        js << "},\"after_ack_first_slots\":{";
        f = true;
        for (const auto& [k, v] : firstAfterAck)
        {
            js << (f ? "" : ",") << "\"" << k << "\":" << v;
            f = false;
        }
        js << "},\"after_ack_second_slots\":{";
        f = true;
        for (const auto& [k, v] : secondAfterAck)
        {
            js << (f ? "" : ",") << "\"" << k << "\":" << v;
            f = false;
        }
        js << "},\"overlap_offset_slots\":{";
        f = true;
        for (const auto& [k, v] : offsetSlots)
        {
            js << (f ? "" : ",") << "\"" << k << "\":" << v;
            f = false;
        }
        js << "}";
    }
    js << "}";
    std::cout << js.str() << std::endl;
    return 0;
}
