// ns-3 (3.37) reference BSS for the celltcp Wi-Fi side-by-side (bench/wifi.py).
//
// Topology (the same as bench/wifi.py writes for celltcp):
//
//   sta 0 ..  sta N-1  ))) AP ===== server
//                          1 Gbit/s, 1 ms one way, drop-tail 1000 packets
//
// Stations stand on a circle of --distance metres around the AP (ConstantPosition),
// YANS channel with its defaults (log-distance, exponent 3, 46.6777 dB at 1 m; 16.0206 dBm
// transmit power, 7 dB noise figure), constant rate. Error rate model --errorModel: default
// ns3::TableBasedErrorRateModel (ns-3.37's own default, set explicitly), or
// ns3::NistErrorRateModel (ns-3's default before 3.33, the model celltcp implements).
//
//   --standard=ac : 802.11ac VHT, channel 36, 20 MHz, VhtMcs<mcs> for data, A-MPDU on
//                   (BE_MaxAmpduSize --maxAmpdu, default 1048575 as celltcp's VHT limit)
//   --standard=g  : 802.11g ERP-OFDM, ErpOfdmRate54Mbps (rate index 7) for data, 24 Mbit/s
//                   for control responses, no aggregation
//
//   --transport=udp : each station sends saturating UDP (OnOff, 1472-byte payloads = 1500-byte
//                     IP packets, --udpRate per station) to the server (uplink)
//   --transport=tcp : one bulk TCP download from the server to each station (Linux-like TCP as
//                     in dumbbell.cc: MSS 1448, SACK, timestamps, 4 MB buffers, CUBIC)
//
// Traffic starts at --start seconds (after association: ns-3 stations associate through
// beacons and probe-free scanning; celltcp has no association) and the goodput is counted
// over [start, duration]. No traffic-control queue discs (uninstalled); the Wi-Fi MAC queue
// holds 1000 packets (celltcp's default per-station queue, Linux's txqueuelen).
//
// Switches that isolate ns-3 mechanisms celltcp does not model (docs/validation.md, "Wi-Fi vs
// ns-3"):
//   --bar=0             QosTxop::UseExplicitBarAfterMissedBlockAck off (default on, ns-3's default)
//   --beaconInterval=T  the AP's beacon interval in microseconds (default 102400, ns-3's)
//   --maxDelay=MS       WifiMacQueue::MaxDelay, the MSDU lifetime in the MAC queue (default 500,
//                       ns-3's); a saturated 1000-packet queue holds MSDUs longer than that
//
// Counters (from the PHYs' PhyTxPsduBegin trace over [start, duration]): data PPDUs and the data
// MPDUs they carried, the mean A-MPDU size, and the other frames on the air by kind (beacons,
// BlockAckRequests, block ACKs, ACKs, management/action frames), each with its air time.
//
// --trace=FILE writes every PPDU on the air and every backoff draw over [start, duration], one
// line each, for bench/wifi_trace.py (nodes numbered as celltcp's capture: 0 the AP, 1 + i
// station i):
//   tx <ns> <node> <data|ack|beacon|bar|block_ack|rts|cts|management|other> <PSDU bytes> <duration ns>
//   backoff <ns> <node> <slots drawn>        (Txop/QosTxop BackoffTrace)
//   cw <ns> <node> <CW>                      (CwTrace: CW after a success or a failure)
//
// Output: one JSON line on stdout. Wall time is Simulator::Run() only.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <map>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

static std::string
JsonDouble(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return buf;
}

// Frames on the air over the measured span, by kind: count, MPDUs, air time (s).
struct Tally
{
    uint64_t ppdus = 0;
    uint64_t mpdus = 0;
    double air = 0;
};
static std::map<std::string, Tally> g_tally;
static double g_countFrom = 0;
static WifiPhyBand g_band = WIFI_PHY_BAND_5GHZ;

// --trace: the file, and the ns-3 node id of the AP (stations are 0 .. N-1).
static FILE* g_trace = nullptr;
static uint32_t g_apNode = 0;

static std::string
FrameKind(const WifiMacHeader& h)
{
    return h.IsQosData() || h.IsData() ? "data"
           : h.IsBeacon()              ? "beacon"
           : h.IsBlockAckReq()         ? "bar"
           : h.IsBlockAck()            ? "block_ack"
           : h.IsAck()                 ? "ack"
           : h.IsRts()                 ? "rts"
           : h.IsCts()                 ? "cts"
           : h.IsMgt()                 ? "management"
                                       : "other";
}

// The node of a trace context "/NodeList/<id>/...", numbered as celltcp's capture (0: the AP).
static uint32_t
TraceNode(const std::string& context)
{
    const std::string key = "/NodeList/";
    size_t a = context.find(key) + key.size();
    uint32_t id = std::stoul(context.substr(a, context.find('/', a) - a));
    return id == g_apNode ? 0 : id + 1;
}

static void
TraceTx(std::string context, WifiConstPsduMap psdus, WifiTxVector txVector, double)
{
    if (Simulator::Now().GetSeconds() < g_countFrom)
    {
        return;
    }
    for (const auto& [staId, psdu] : psdus)
    {
        std::fprintf(g_trace, "tx %lld %u %s %u %lld\n", (long long)Simulator::Now().GetNanoSeconds(),
                     TraceNode(context), FrameKind(psdu->GetHeader(0)).c_str(), (unsigned)psdu->GetSize(),
                     (long long)WifiPhy::CalculateTxDuration(psdu->GetSize(), txVector, g_band).GetNanoSeconds());
    }
}

static void
TraceValue(const char* what, std::string context, uint32_t value, uint8_t)
{
    if (Simulator::Now().GetSeconds() >= g_countFrom)
    {
        std::fprintf(g_trace, "%s %lld %u %u\n", what, (long long)Simulator::Now().GetNanoSeconds(),
                     TraceNode(context), value);
    }
}

static void
TraceBackoff(std::string context, uint32_t value, uint8_t link)
{
    TraceValue("backoff", context, value, link);
}

static void
TraceCw(std::string context, uint32_t value, uint8_t link)
{
    TraceValue("cw", context, value, link);
}

static void
OnTxPsduBegin(WifiConstPsduMap psdus, WifiTxVector txVector, double)
{
    if (Simulator::Now().GetSeconds() < g_countFrom)
    {
        return;
    }
    for (const auto& [staId, psdu] : psdus)
    {
        std::string kind = FrameKind(psdu->GetHeader(0));
        Tally& t = g_tally[kind];
        t.ppdus += 1;
        t.mpdus += psdu->GetNMpdus();
        t.air += WifiPhy::CalculateTxDuration(psdu->GetSize(), txVector, g_band).GetSeconds();
    }
}

int
main(int argc, char* argv[])
{
    std::string standard = "ac";
    std::string transport = "udp";
    uint32_t stations = 14;
    double duration = 10.0;
    double start = 1.0;
    uint32_t mcs = 7;
    double distance = 5.0;
    uint32_t maxAmpdu = 1048575;
    std::string udpRate = "100Mbps";
    uint32_t seed = 1;
    bool bar = true;
    uint32_t maxDelayMs = 500;
    uint32_t beaconInterval = 102400;
    std::string errorModel = "ns3::TableBasedErrorRateModel";
    std::string traceFile;

    auto setupStart = std::chrono::steady_clock::now();
    CommandLine cmd(__FILE__);
    cmd.AddValue("standard", "ac | g", standard);
    cmd.AddValue("transport", "udp (uplink, saturating) | tcp (bulk download)", transport);
    cmd.AddValue("stations", "number of stations", stations);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("start", "traffic start, seconds", start);
    cmd.AddValue("mcs", "VHT MCS (802.11ac)", mcs);
    cmd.AddValue("distance", "station distance to the AP, metres", distance);
    cmd.AddValue("maxAmpdu", "BE_MaxAmpduSize in bytes (802.11ac)", maxAmpdu);
    cmd.AddValue("udpRate", "offered UDP rate per station", udpRate);
    cmd.AddValue("seed", "ns-3 RNG run number", seed);
    cmd.AddValue("bar", "UseExplicitBarAfterMissedBlockAck (ns-3 default true)", bar);
    cmd.AddValue("maxDelay", "WifiMacQueue::MaxDelay, milliseconds (ns-3 default 500)", maxDelayMs);
    cmd.AddValue("beaconInterval", "beacon interval, microseconds (multiple of 1024)", beaconInterval);
    cmd.AddValue("errorModel", "the PHYs' error rate model (ns3::TableBasedErrorRateModel | ns3::NistErrorRateModel)", errorModel);
    cmd.AddValue("trace", "write every PPDU and backoff draw to this file (bench/wifi_trace.py)", traceFile);
    cmd.Parse(argc, argv);
    if (stations == 0 || duration <= start || (standard != "ac" && standard != "g") ||
        (transport != "udp" && transport != "tcp"))
    {
        std::cerr << "wifi: expected --standard=ac|g, --transport=udp|tcp, --stations >= 1, "
                     "--duration > --start\n";
        return 2;
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName("ns3::TcpCubic")));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::WifiMacQueue::MaxSize", QueueSizeValue(QueueSize("1000p")));
    Config::SetDefault("ns3::QosTxop::UseExplicitBarAfterMissedBlockAck", BooleanValue(bar));
    Config::SetDefault("ns3::WifiMacQueue::MaxDelay", TimeValue(MilliSeconds(maxDelayMs)));
    g_countFrom = start;

    NodeContainer stas;
    stas.Create(stations);
    Ptr<Node> ap = CreateObject<Node>();
    Ptr<Node> server = CreateObject<Node>();

    WifiHelper wifi;
    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    phy.SetErrorRateModel(errorModel);
    if (standard == "ac")
    {
        wifi.SetStandard(WIFI_STANDARD_80211ac);
        phy.Set("ChannelSettings", StringValue("{36, 20, BAND_5GHZ, 0}"));
        std::ostringstream mode;
        mode << "VhtMcs" << mcs;
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                     "DataMode", StringValue(mode.str()),
                                     "ControlMode", StringValue("VhtMcs0"));
    }
    else
    {
        wifi.SetStandard(WIFI_STANDARD_80211g);
        g_band = WIFI_PHY_BAND_2_4GHZ;
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                     "DataMode", StringValue("ErpOfdmRate54Mbps"),
                                     "ControlMode", StringValue("ErpOfdmRate24Mbps"));
    }
    WifiMacHelper mac;
    Ssid ssid("bench");
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid), "ActiveProbing", BooleanValue(false));
    NetDeviceContainer staDevs = wifi.Install(phy, mac, stas);
    mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid), "BeaconInterval", TimeValue(MicroSeconds(beaconInterval)));
    NetDeviceContainer apDev = wifi.Install(phy, mac, ap);
    if (standard == "ac")
    {
        Config::Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/BE_MaxAmpduSize", UintegerValue(maxAmpdu));
    }

    MobilityHelper mob;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    for (uint32_t i = 0; i < stations; ++i)
    {
        double a = 2.0 * M_PI * i / stations;
        pos->Add(Vector(distance * std::cos(a), distance * std::sin(a), 0.0));
    }
    mob.SetPositionAllocator(pos);
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.Install(stas);
    Ptr<ListPositionAllocator> apPos = CreateObject<ListPositionAllocator>();
    apPos->Add(Vector(0, 0, 0));
    apPos->Add(Vector(0, 0, 0));
    mob.SetPositionAllocator(apPos);
    mob.Install(ap);
    mob.Install(server);

    PointToPointHelper wire;
    wire.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    wire.SetChannelAttribute("Delay", StringValue("1ms"));
    wire.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000p"));
    NetDeviceContainer wireDevs = wire.Install(ap, server);

    InternetStackHelper stack;
    stack.Install(stas);
    stack.Install(ap);
    stack.Install(server);
    Ipv4AddressHelper addr;
    TrafficControlHelper tch;
    addr.SetBase("10.1.0.0", "255.255.0.0");
    Ipv4InterfaceContainer staIf = addr.Assign(staDevs);
    addr.Assign(apDev);
    addr.SetBase("10.2.0.0", "255.255.255.252");
    Ipv4InterfaceContainer srvIf = addr.Assign(wireDevs);
    tch.Uninstall(staDevs);
    tch.Uninstall(apDev);
    tch.Uninstall(wireDevs);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < stations; ++i)
    {
        uint16_t port = 5000 + i;
        if (transport == "udp")
        {
            PacketSinkHelper sh("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
            ApplicationContainer sa = sh.Install(server);
            sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
            OnOffHelper src("ns3::UdpSocketFactory", InetSocketAddress(srvIf.GetAddress(1), port));
            src.SetConstantRate(DataRate(udpRate), 1472);
            ApplicationContainer ca = src.Install(stas.Get(i));
            ca.Start(Seconds(start));
        }
        else
        {
            PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
            ApplicationContainer sa = sh.Install(stas.Get(i));
            sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
            BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(staIf.GetAddress(i), port));
            src.SetAttribute("MaxBytes", UintegerValue(0));
            src.SetAttribute("SendSize", UintegerValue(131072));
            ApplicationContainer ca = src.Install(server);
            ca.Start(Seconds(start));
        }
    }

    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Phy/PhyTxPsduBegin",
                                  MakeCallback(&OnTxPsduBegin));
    if (!traceFile.empty())
    {
        g_trace = std::fopen(traceFile.c_str(), "w");
        if (!g_trace)
        {
            std::cerr << "wifi: --trace: cannot write " << traceFile << "\n";
            return 2;
        }
        g_apNode = ap->GetId();
        const std::string dev = "/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/";
        Config::Connect(dev + "Phy/PhyTxPsduBegin", MakeCallback(&TraceTx));
        // the DCF of 802.11g (non-QoS) and the best-effort EDCAF of 802.11ac
        const std::string txop = standard == "g" ? "Mac/Txop/" : "Mac/BE_Txop/";
        Config::Connect(dev + txop + "BackoffTrace", MakeCallback(&TraceBackoff));
        Config::Connect(dev + txop + "CwTrace", MakeCallback(&TraceCw));
    }
    Simulator::Stop(Seconds(duration));
    auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    auto runEnd = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(runEnd - runStart).count();
    double setupWall = std::chrono::duration<double>(runStart - setupStart).count();
    uint64_t events = Simulator::GetEventCount();
    double simSeconds = Simulator::Now().GetSeconds();
    std::vector<uint64_t> rx;
    uint64_t total = 0;
    for (auto& s : sinks)
    {
        rx.push_back(s->GetTotalRx());
        total += s->GetTotalRx();
    }
    Simulator::Destroy();
    if (g_trace)
    {
        std::fclose(g_trace);
    }

    double span = duration - start;
    double sumX = 0, sumX2 = 0;
    for (uint64_t b : rx)
    {
        sumX += double(b);
        sumX2 += double(b) * double(b);
    }
    std::ostringstream js;
    js << "{\"simulator\":\"ns-3.37\",\"scenario\":\"wifi\"";
    js << ",\"standard\":\"" << standard << "\",\"transport\":\"" << transport << "\"";
    js << ",\"stations\":" << stations << ",\"mcs\":" << mcs << ",\"error_model\":\"" << errorModel << "\"";
    js << ",\"sim_seconds\":" << JsonDouble(simSeconds);
    js << ",\"wall_seconds\":" << JsonDouble(wall);
    js << ",\"setup_wall_seconds\":" << JsonDouble(setupWall);
    js << ",\"sim_per_wall\":" << JsonDouble(wall > 0 ? simSeconds / wall : 0.0);
    js << ",\"events\":" << events;
    js << ",\"goodput_bps_total\":" << JsonDouble(total * 8.0 / span);
    js << ",\"jain_fairness\":" << JsonDouble(sumX2 > 0 ? sumX * sumX / (rx.size() * sumX2) : 0.0);
    js << ",\"per_flow_goodput_bps\":[";
    for (size_t i = 0; i < rx.size(); ++i)
    {
        js << (i ? "," : "") << JsonDouble(rx[i] * 8.0 / span);
    }
    js << "],\"bar\":" << (bar ? "true" : "false") << ",\"max_delay_ms\":" << maxDelayMs
       << ",\"beacon_interval_us\":" << beaconInterval << ",\"frames\":{";
    bool first = true;
    for (const auto& [kind, t] : g_tally)
    {
        js << (first ? "" : ",") << "\"" << kind << "\":{\"ppdus\":" << t.ppdus << ",\"mpdus\":" << t.mpdus
           << ",\"air_s\":" << JsonDouble(t.air) << "}";
        first = false;
    }
    js << "}}";
    std::cout << js.str() << std::endl;
    return 0;
}
