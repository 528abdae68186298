// ns-3 (3.37) X2 handover reference for celltcp's handover study (study 001, issue 19).
//
// The setting of study 001's scenario 1 and of ns-3's own lena-x2-handover examples: two eNBs
// 750 m apart (x = 0 and x = 750 m), a UE driving from --start metres along +x at --speedKmh
// (40 km/h), A3-RSRP handover (hysteresis 3 dB, time-to-trigger 256 ms), X2 with 6 ms of delay
// (PointToPointEpcHelper X2LinkDelay), RLC AM on the data bearer, one TCP bulk download
// (BulkSendApplication) from a server 20 ms behind the PGW (1 Gbit/s), TcpCubic.
//
// Radio: FDD, DL EARFCN 100, 10 MHz (50 PRB) as examples/handover.toml; LogDistance path loss
// with exponent 3.76 and 15.3 dB at 1 m, i.e. 128.1 + 37.6 log10(d/km) (TR 36.814, what
// celltcp uses), so the 3 dB point is at 409.4 m from the source, as in docs/handover.md;
// no fading, no shadowing; ideal RRC (ns-3's default).
//
// TCP: --tcp ns3 keeps ns-3 3.37's TCP defaults (MinRto 1 s, initial cwnd 10, delayed ACK 2 /
// 200 ms, no timestamps ... as lena-x2-handover does); --tcp linux uses bench/ns3/lte.cc's
// Linux-like settings (MinRto 200 ms, SACK, timestamps, delayed ACK 40 ms). MSS 1400, 4 MiB
// socket buffers in both. --rlcBuf sets LteRlcAm::MaxTxBufferSize (ns-3's default 10 KiB).
//
// Output (one JSON object on stdout): the handover instants (UE HandoverStart/EndOk traces), the
// sink's received bytes in --bin (10 ms) bins over the whole run, the server's TCP congestion
// state changes (ns-3 TcpSocketState: 4 = CA_LOSS, i.e. a retransmission timeout) and
// retransmission timeouts' times, cwnd samples, and derived figures: goodput before the
// handover, the largest gap between sink receptions after the handover start, and the time
// from the handover start until goodput is back to half of what it was before.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/lte-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

std::string
Num(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    return buf;
}

double g_bin = 0.01;
std::vector<uint64_t> g_rxBins;
std::vector<double> g_rxTimes; // every sink reception (s)
std::vector<double> g_hoStart;
std::vector<double> g_hoEnd;
std::vector<std::pair<double, int>> g_congState;
std::vector<std::pair<double, uint32_t>> g_cwnd;
double g_lastCwndT = -1;

void
SinkRx(Ptr<const Packet> p, const Address&)
{
    double t = Simulator::Now().GetSeconds();
    size_t i = static_cast<size_t>(t / g_bin);
    if (i < g_rxBins.size())
    {
        g_rxBins[i] += p->GetSize();
    }
    g_rxTimes.push_back(t);
}

void
HoStart(std::string, uint64_t, uint16_t, uint16_t, uint16_t)
{
    g_hoStart.push_back(Simulator::Now().GetSeconds());
}

void
HoEnd(std::string, uint64_t, uint16_t, uint16_t)
{
    g_hoEnd.push_back(Simulator::Now().GetSeconds());
}

void
CongState(std::string, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t s)
{
    g_congState.emplace_back(Simulator::Now().GetSeconds(), static_cast<int>(s));
}

void
Cwnd(std::string, uint32_t, uint32_t c)
{
    double t = Simulator::Now().GetSeconds();
    if (t - g_lastCwndT >= 0.01)
    {
        g_cwnd.emplace_back(t, c);
        g_lastCwndT = t;
    }
}

void
ConnectTcp(uint32_t serverNodeId)
{
    std::ostringstream p;
    p << "/NodeList/" << serverNodeId << "/$ns3::TcpL4Protocol/SocketList/*/";
    Config::ConnectFailSafe(p.str() + "CongState", MakeCallback(&CongState));
    Config::ConnectFailSafe(p.str() + "CongestionWindow", MakeCallback(&Cwnd));
}

} // namespace

int
main(int argc, char* argv[])
{
    double duration = 15.0;
    double start = 300.0;
    double speedKmh = 40.0;
    double distance = 750.0;
    std::string tcp = "ns3";
    uint32_t rlcBuf = 10 * 1024;
    double x2DelayMs = 6.0;
    uint32_t seed = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("start", "UE start x (m)", start);
    cmd.AddValue("speedKmh", "UE speed along +x (km/h)", speedKmh);
    cmd.AddValue("distance", "distance between the eNBs (m)", distance);
    cmd.AddValue("tcp", "ns3 (ns-3 3.37 TCP defaults) | linux (bench/ns3/lte.cc settings)", tcp);
    cmd.AddValue("rlcBuf", "LteRlcAm::MaxTxBufferSize, bytes", rlcBuf);
    cmd.AddValue("x2DelayMs", "X2 link delay (ms)", x2DelayMs);
    cmd.AddValue("bin", "time series bin (s)", g_bin);
    cmd.AddValue("seed", "ns-3 RNG run number", seed);
    cmd.Parse(argc, argv);
    if (tcp != "ns3" && tcp != "linux")
    {
        std::cerr << "x2: unknown --tcp=" << tcp << " (ns3|linux)\n";
        return 2;
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1400));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    if (tcp == "linux")
    {
        Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
        Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
        Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
        Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
        Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
        Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    }
    Config::SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping",
                       EnumValue(LteEnbRrc::RLC_AM_ALWAYS));
    Config::SetDefault("ns3::LteRlcAm::MaxTxBufferSize", UintegerValue(rlcBuf));

    Ptr<LteHelper> lte = CreateObject<LteHelper>();
    Ptr<PointToPointEpcHelper> epc = CreateObject<PointToPointEpcHelper>();
    epc->SetAttribute("X2LinkDelay", TimeValue(Seconds(x2DelayMs / 1000.0)));
    lte->SetEpcHelper(epc);
    lte->SetPathlossModelType(LogDistancePropagationLossModel::GetTypeId());
    lte->SetPathlossModelAttribute("Exponent", DoubleValue(3.76));
    lte->SetPathlossModelAttribute("ReferenceLoss", DoubleValue(15.3));
    lte->SetHandoverAlgorithmType("ns3::A3RsrpHandoverAlgorithm");
    lte->SetHandoverAlgorithmAttribute("Hysteresis", DoubleValue(3.0));
    lte->SetHandoverAlgorithmAttribute("TimeToTrigger", TimeValue(MilliSeconds(256)));
    lte->SetEnbDeviceAttribute("DlEarfcn", UintegerValue(100));
    lte->SetEnbDeviceAttribute("UlEarfcn", UintegerValue(18100));
    lte->SetEnbDeviceAttribute("DlBandwidth", UintegerValue(50));
    lte->SetEnbDeviceAttribute("UlBandwidth", UintegerValue(50));

    Ptr<Node> pgw = epc->GetPgwNode();
    NodeContainer serverC;
    serverC.Create(1);
    Ptr<Node> server = serverC.Get(0);
    InternetStackHelper internet;
    internet.Install(serverC);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
    p2p.SetChannelAttribute("Delay", StringValue("20ms"));
    NetDeviceContainer inetDevs = p2p.Install(pgw, server);
    Ipv4AddressHelper addr;
    addr.SetBase("1.0.0.0", "255.0.0.0");
    Ipv4InterfaceContainer inetIf = addr.Assign(inetDevs);
    Ipv4StaticRoutingHelper srh;
    srh.GetStaticRouting(server->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), 1);

    NodeContainer enbC;
    enbC.Create(2);
    NodeContainer ueC;
    ueC.Create(1);
    MobilityHelper mob;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    pos->Add(Vector(distance, 0, 0));
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.SetPositionAllocator(pos);
    mob.Install(enbC);
    mob.SetMobilityModel("ns3::ConstantVelocityMobilityModel");
    mob.Install(ueC);
    ueC.Get(0)->GetObject<MobilityModel>()->SetPosition(Vector(start, 0, 0));
    ueC.Get(0)->GetObject<ConstantVelocityMobilityModel>()->SetVelocity(
        Vector(speedKmh / 3.6, 0, 0));

    NetDeviceContainer enbDevs = lte->InstallEnbDevice(enbC);
    NetDeviceContainer ueDevs = lte->InstallUeDevice(ueC);
    internet.Install(ueC);
    Ipv4InterfaceContainer ueIf = epc->AssignUeIpv4Address(ueDevs);
    srh.GetStaticRouting(ueC.Get(0)->GetObject<Ipv4>())
        ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    lte->Attach(ueDevs.Get(0), enbDevs.Get(0));
    lte->AddX2Interface(enbC);

    uint16_t port = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sinkHelper.Install(ueC.Get(0));
    sa.Start(Seconds(0.0));
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sa.Get(0));
    sink->TraceConnectWithoutContext("Rx", MakeCallback(&SinkRx));
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(ueIf.GetAddress(0), port));
    src.SetAttribute("MaxBytes", UintegerValue(0));
    src.SetAttribute("SendSize", UintegerValue(131072));
    ApplicationContainer ca = src.Install(server);
    ca.Start(Seconds(0.1));
    Simulator::Schedule(Seconds(0.2), &ConnectTcp, server->GetId());

    Config::Connect("/NodeList/*/DeviceList/*/LteUeRrc/HandoverStart", MakeCallback(&HoStart));
    Config::Connect("/NodeList/*/DeviceList/*/LteUeRrc/HandoverEndOk", MakeCallback(&HoEnd));

    g_rxBins.assign(static_cast<size_t>(std::ceil(duration / g_bin)), 0);
    Simulator::Stop(Seconds(duration));
    Simulator::Run();
    Simulator::Destroy();

    // Derived figures around the first handover.
    double ho = g_hoStart.empty() ? -1 : g_hoStart[0];
    double before = 0, gap = 0, recovered = -1;
    if (ho > 0)
    {
        double lo = std::max(0.5, ho - 2.0);
        uint64_t bytes = 0;
        for (size_t i = 0; i < g_rxBins.size(); ++i)
        {
            double t = i * g_bin;
            if (t >= lo && t + g_bin <= ho)
            {
                bytes += g_rxBins[i];
            }
        }
        before = bytes * 8.0 / (ho - lo) / 1e6;
        double prev = ho;
        for (double t : g_rxTimes)
        {
            if (t >= ho)
            {
                gap = std::max(gap, t - prev);
                prev = t;
            }
            else
            {
                prev = std::max(prev, ho);
            }
        }
        // first 100 ms window (sliding by one bin) after the handover start whose goodput is
        // at least half of `before`
        size_t w = static_cast<size_t>(std::lround(0.1 / g_bin));
        for (size_t i = static_cast<size_t>(ho / g_bin); i + w <= g_rxBins.size(); ++i)
        {
            uint64_t b = 0;
            for (size_t k = i; k < i + w; ++k)
            {
                b += g_rxBins[k];
            }
            if (b * 8.0 / 0.1 / 1e6 >= 0.5 * before)
            {
                recovered = (i + w) * g_bin - ho;
                break;
            }
        }
    }

    std::ostringstream js;
    js << "{\"simulator\":\"ns-3.37\",\"scenario\":\"x2\"";
    js << ",\"duration\":" << Num(duration) << ",\"start_m\":" << Num(start);
    js << ",\"speed_kmh\":" << Num(speedKmh) << ",\"distance_m\":" << Num(distance);
    js << ",\"tcp\":\"" << tcp << "\",\"rlc_buf_bytes\":" << rlcBuf;
    js << ",\"x2_delay_ms\":" << Num(x2DelayMs) << ",\"seed\":" << seed;
    js << ",\"bin_s\":" << Num(g_bin);
    js << ",\"handover_start_s\":[";
    for (size_t i = 0; i < g_hoStart.size(); ++i)
    {
        js << (i ? "," : "") << Num(g_hoStart[i]);
    }
    js << "],\"handover_end_s\":[";
    for (size_t i = 0; i < g_hoEnd.size(); ++i)
    {
        js << (i ? "," : "") << Num(g_hoEnd[i]);
    }
    js << "],\"goodput_before_mbps\":" << Num(before);
    js << ",\"largest_gap_after_handover_s\":" << Num(gap);
    js << ",\"recovery_s\":" << Num(recovered);
    js << ",\"total_rx_bytes\":" << sink->GetTotalRx();
    js << ",\"cong_state\":[";
    for (size_t i = 0; i < g_congState.size(); ++i)
    {
        js << (i ? "," : "") << "[" << Num(g_congState[i].first) << ","
           << g_congState[i].second << "]";
    }
    js << "],\"cwnd\":[";
    for (size_t i = 0; i < g_cwnd.size(); ++i)
    {
        js << (i ? "," : "") << "[" << Num(g_cwnd[i].first) << "," << g_cwnd[i].second << "]";
    }
    js << "],\"rx_bytes_per_bin\":[";
    for (size_t i = 0; i < g_rxBins.size(); ++i)
    {
        js << (i ? "," : "") << g_rxBins[i];
    }
    js << "]}";
    std::cout << js.str() << std::endl;
    return 0;
}
